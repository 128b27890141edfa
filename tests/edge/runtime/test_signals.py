"""How a process is told to stop, and how it shows what it waits for: SIGINT/SIGTERM set the
stop event; SIGUSR1 prints every thread's stack and the process goes on."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

WAITER = textwrap.dedent("""
    import sys, threading
    from edge.runtime.signals import stop_on_signals

    def waits_for_the_brain(ready):
        ready.wait()

    ready = threading.Event()
    threading.Thread(target=waits_for_the_brain, args=(ready,), name="brain-waiter", daemon=True).start()
    with stop_on_signals() as stop:
        print("inside", flush=True)
        while not stop.wait(0.05):
            pass
    ready.set()
    print("stopped", flush=True)
""")


def test_sigusr1_prints_every_threads_stack_and_the_process_goes_on_until_sigint():
    proc = subprocess.Popen([sys.executable, "-c", WAITER], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "inside"
        proc.send_signal(signal.SIGUSR1)
        assert proc.poll() is None                  # still running: the stacks were printed, no more
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and out.strip() == "stopped", err
    assert err.count("waits_for_the_brain") == 1 and "Thread 0x" in err, err   # the waiting thread, named
