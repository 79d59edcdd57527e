"""The tunable settings: the catalogue of their names, layers and rules
(:mod:`~iotune.settings.catalogue`), their values under a key path
(:mod:`~iotune.settings.values`), units (:mod:`~iotune.settings.units`), search spaces
(:mod:`~iotune.settings.space`), and whether a run's settings took effect
(:mod:`~iotune.settings.in_effect`).

Importing the package itself runs nothing: the kernel programs import its modules at
start-up, and import only what they use.
"""
