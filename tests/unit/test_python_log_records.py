"""Python log records (py4j's traceback when Ctrl-C breaks a call to the JVM) go to the log file, not the terminal."""

import subprocess
import sys
import textwrap


def test_a_logged_traceback_goes_to_the_log_file(tmp_path):
    log = tmp_path / "log" / "spark.log"
    program = textwrap.dedent(f"""
        import logging
        from pathlib import Path
        from shell.engine.spark import quiet_python_loggers

        quiet_python_loggers(Path({str(log)!r}))
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            logging.exception("Exception while sending command.")  # what py4j does, on the root logger
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "Exception while sending command." in log.read_text() and "KeyboardInterrupt" in log.read_text()
