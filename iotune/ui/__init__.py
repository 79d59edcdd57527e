"""What people read: results in the format asked for (:mod:`~iotune.ui.output`) and the
terminal's tables and progress (:mod:`~iotune.ui.terminal`)."""
