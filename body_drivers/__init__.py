"""The body: carries out the actions a brain sends, one at a time, and reports each result.

Public: ``node.BodyNode`` (the body node), ``sim.SimBody`` (the headless simulated body),
``servo_body.build_servo_body`` (real servos, from ``body_config.parse_body_config`` /
``load_body_config`` into ``body_types``), ``safety_monitor.SafetyMonitor``, ``timeline``;
``servo`` (the serial servo buses) and ``speech`` (the voice) are packages of their own.
"""
