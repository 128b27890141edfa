"""Protocol-faithful servo bus simulators: a pseudo-terminal that answers like Feetech, Dynamixel
or Maestro servos byte for byte, with faults to inject, so drivers and the body are tested without
hardware. Public: ``simulator`` (``start_simulator``, ``ServoSimulator``, ``run_servo_sim``) and
``cli`` (``companion servo-sim``, ``python -m body_drivers.servo.sim``)."""
