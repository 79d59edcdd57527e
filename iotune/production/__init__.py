"""Tuning across production jobs: every run of the user's application is a measurement.

:mod:`iotune.production.rule` decides which configuration a job runs (pure, no I/O; the
benchmark replays it); :mod:`iotune.production.jobs` records the choice and the job's
result in the store and reads them back for the rule. docs/production.md is the user's view.
"""
