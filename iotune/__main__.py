"""``python -m iotune`` runs the command line, as the job scripts iotune writes do."""

from iotune.cli.main import main

main()
