"""A facility's knowledge base: what earlier tunes, campaigns and replays measured on a
system, kept in one file so that a new tune starts from it (:mod:`iotune.knowledge.priors`
is what a tune receives; nothing here can confirm a recommendation, only order and size
the work)."""
