"""Serial bus servos: Feetech, Dynamixel and Pololu Maestro behind one interface.

Public: ``bus`` (the ``ServoBus`` interface, ``ServoError``, ``PROTOCOLS``), ``buses.open_bus``
(the driver for a protocol), ``tables`` (each model's control table); ``sim`` simulates the
buses. Nothing here loads pyserial until a bus is opened.
"""
