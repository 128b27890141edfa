"""``python -m body_drivers.servo.sim`` — the same as ``companion servo-sim``."""

import sys

from body_drivers.servo.sim.cli import main

sys.exit(main())
