# shellcheck shell=bash
# The systemd units of each install profile, from edge/kinds.py. Generated: `companion kinds --sh`;
# tests/deploy/test_kinds_table.py fails when this file differs from the table.
ALL_UNITS="registry broker body brain camera mic gateway mcp"
UNITS_minimal="broker body brain"
UNITS_standard="registry broker body brain camera mic gateway"
UNITS_jetson="registry broker body brain camera mic gateway"
