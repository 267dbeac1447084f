"""The job process's entry point: `python -m shell.job_process <home>/jobs/<id>`.

Why it exists apart from shell/jobs/process.py, which does the work (the monitor, the stop requests, the
supervision): a job process opens a Session, and the session sits above the jobs package (it starts and lists
jobs), so the one place that joins the two is an entry point on top of both. The session is opened in the
forked job process, after the monitor split off, so the monitor never imports Spark.
"""

from __future__ import annotations

import sys
from pathlib import Path

from shell.jobs.process import JOB_SPARK_CONF, main
from shell.jobs.record import PRINT_FILE, JobRecord


def job_session(record: JobRecord, folder: Path):  # noqa: ANN201 - a Session
    """A session on the job's home, with the record's settings and catalog, whose INSERT runs in this process."""
    from shell.catalogs.catalogs import Catalogs
    from shell.engine import real_time
    from shell.engine.spark import SparkRuntime
    from shell.session import Session, SessionOptions

    home = folder.parent.parent
    settings = {k: v for k, v in record.settings.items() if k not in ("execution.savepoint.path",)}
    print_stream = open(folder / PRINT_FILE, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - the job's life
    master = real_time.local_master(record.master or "local[*]", settings)
    options = SessionOptions(home=home, master=master, settings=settings,
                             print_stream=print_stream, job_process=True)  # fmt: skip
    session = Session(options, runtime=None)
    conf = {**JOB_SPARK_CONF, **session.settings.spark_conf()}
    session.runtime = SparkRuntime(options.master, conf, folder / "spark.log",
                                   app_name=f"streamshell job {record.job_id} ({record.name})")  # fmt: skip
    if record.catalog is not None:
        session.catalog = Catalogs.from_snapshot(record.catalog)
        session.catalog.spark = session.spark_session
    if record.functions is not None:  # the functions of the shell that started it, not the home's of today
        session.functions.restore(record.functions)
    return session


if __name__ == "__main__":
    sys.exit(main(job_session))
