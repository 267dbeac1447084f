"""The UI-free core: `Session.execute(statement) -> Result`.

A session owns the Spark runtime, the catalog, the settings and the jobs. The REPL, the script runner and the
tests all drive it the same way and render what it returns; nothing here prints or imports a terminal library.
Each statement kind is handled by one method, found in a table keyed by the statement's class.
"""

from __future__ import annotations

import shutil
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, TextIO

from shell.catalog.ddl import create_table_sql
from shell.catalog.like import apply_like
from shell.catalog.model import TableDef, ViewDef
from shell.catalog.store import Catalog
from shell.changes import RowKind
from shell.config import Settings, read_config_file
from shell.connectors.registry import secret_keys, validate_table
from shell.engine import native
from shell.engine.bad_records import dead_letter_dir, read_dead_letters
from shell.engine.spark import SparkRuntime
from shell.inspect.commands import describe_topic, print_topic
from shell.errors import UnsupportedFeatureError
from shell.jobs.registry import JOB_COLUMNS, Job, JobRegistry
from shell.logfiles import rotate_logs
from shell.planner.deletes import deleted_keys
from shell.planner.planner import plan_query
from shell.results import (
    ChangeStream,
    ClearRequested,
    JobStarted,
    Message,
    QuitRequested,
    Result,
    Rows,
    Text,
)
from shell.secrets import REDACTED, redact, redact_value
from shell.sql import statements as st
from shell.units import parse_duration_ms


@dataclass
class SessionOptions:
    home: Path
    master: str = "local[*]"
    settings: dict[str, str] = field(default_factory=dict)
    verbose: bool = False
    print_stream: TextIO | None = None  # where the print connector writes; stderr when None


class Session:
    """`runtime` may be given to share one Spark between sessions (tests); a session stops only its own."""

    def __init__(self, options: SessionOptions, runtime: SparkRuntime | None = None):
        self.options = options
        self.home = options.home
        self.settings = Settings()
        self.warnings: list[str] = []  # files that could not be used, one line each, for the front end to show
        config = read_config_file(self.home / "config.properties", self.warnings.append)
        for key, value in {**config, **options.settings}.items():
            self.settings.set(key, value)
        self.catalog = Catalog.open(self.home / "catalog")
        self.warnings += self.catalog.warnings
        rotate_logs(self.home / "log")
        self.jobs = JobRegistry(self.home, self.settings)
        self.owns_runtime = runtime is None
        self.runtime = runtime or SparkRuntime(
            options.master, self.settings.spark_conf(), self.home / "log" / "spark.log"
        )
        self.handlers: dict[type, Callable] = {
            st.CreateTable: self._create_table,
            st.CreateView: self._create_view,
            st.DropTable: self._drop,
            st.AlterTableSet: self._alter_table,
            st.Select: self._select,
            st.Insert: self._insert,
            st.Delete: self._delete,
            st.Help: self._help,
            st.Quit: lambda s: QuitRequested(),
            st.Clear: lambda s: ClearRequested(),
            st.Set: self._set,
            st.Reset: self._reset,
            st.Show: self._show,
            st.ShowCreate: self._show_create,
            st.Describe: self._describe,
            st.Explain: self._explain,
            st.StopJob: self._stop_job,
            st.ResumeJob: self._resume_job,
            st.ShowErrors: self._show_errors,
            st.PrintTopic: lambda s: print_topic(self, s),
            st.DescribeTopic: lambda s: describe_topic(self, s),
        }

    # the core API ----------------------------------------------------------------------------------------------

    def execute(self, statement: st.Statement) -> Result:
        handler = self.handlers.get(type(statement))
        if handler is None:
            raise UnsupportedFeatureError(f"{statement_name(statement)} is not supported yet")
        return handler(statement)

    def needs_spark(self, statement: st.Statement) -> bool:
        return isinstance(statement, (st.Select, st.Insert, st.Delete, st.StatementSet, st.Explain, st.ResumeJob))

    def start_spark(self) -> None:
        self.runtime.start()

    def result_mode(self, interactive: bool) -> str:
        chosen = self.settings.get("sql-client.execution.result-mode")
        if chosen is None:
            return "table" if interactive else "tableau"
        return "tableau" if chosen == "table" and not interactive else chosen

    def max_column_width(self) -> int:
        return int(self.settings.get("sql-client.display.max-column-width") or 40)

    def close(self) -> None:
        self.jobs.stop_all()
        if self.owns_runtime:
            self.runtime.stop()

    # DDL -------------------------------------------------------------------------------------------------------

    def _create_table(self, s: st.CreateTable) -> Result:
        table = apply_like(s.table, self.catalog.table(s.table.like.source)) if s.table.like else s.table
        validate_table(table)
        created = self.catalog.add(table, temporary=s.temporary, if_not_exists=s.if_not_exists)
        return Message("Table has been created." if created else f"Table '{table.name}' already exists; skipped."
                       if s.if_not_exists else f"Table '{table.name}' already exists with this definition; unchanged.")

    def _create_view(self, s: st.CreateView) -> Result:
        view = ViewDef(name=s.name, query_sql=s.query_sql)
        plan_query(s.query, self.catalog)  # fails now, not at first use, if the query is wrong
        created = self.catalog.add(view, temporary=s.temporary, if_not_exists=s.if_not_exists)
        return Message("View has been created." if created else f"View '{s.name}' already exists; skipped."
                       if s.if_not_exists else f"View '{s.name}' already exists with this definition; unchanged.")

    def _drop(self, s: st.DropTable) -> Result:
        kind = ViewDef if s.is_view else TableDef
        dropped = self.catalog.drop(s.name, kind, if_exists=s.if_exists)
        noun = "View" if s.is_view else "Table"
        return Message(f"{noun} has been removed." if dropped else f"{noun} '{s.name}' does not exist; skipped.")

    def _alter_table(self, s: st.AlterTableSet) -> Result:
        table = self.catalog.table(s.name)
        changed = replace(table, options={**table.options, **s.options})
        validate_table(changed)
        self.catalog.replace(changed)
        return Message("Table has been altered.")

    # queries and jobs ------------------------------------------------------------------------------------------

    def _run_context(self, work_dir: Path) -> native.RunContext:
        return native.RunContext(
            spark=self.runtime.get(),
            work_dir=work_dir,
            trigger_ms=parse_duration_ms(self.settings.get("execution.checkpointing.interval") or "1 s"),
            errors_trigger_ms=parse_duration_ms(self.settings.get("table.exec.errors.interval") or "10 s"),
            print_stream=self.options.print_stream,
            errors_dir=self.home / "errors",
            spark_conf=self.settings.spark_conf(),
            layout=(int(self.settings.get("table.exec.changelog.buckets")),
                    int(self.settings.get("table.exec.changelog.sub-buckets"))),
            local_copies=self.settings.get("table.exec.changelog.local-copies") == "true",
            max_rows_per_batch=int(self.settings.get("sql-client.display.max-rows-per-batch") or 10_000),
        )

    def _select(self, s: st.Select) -> ChangeStream:
        plan = plan_query(s.query, self.catalog)
        work_dir = self.home / "tmp" / f"select-{uuid.uuid4().hex[:8]}"
        stream = native.start_select(self._run_context(work_dir), plan)
        cleanup = stream.cancel_callback

        def cancel_and_clean() -> None:
            if cleanup is not None:
                cleanup()
            shutil.rmtree(work_dir, ignore_errors=True)

        stream.cancel_callback = cancel_and_clean
        return stream

    def _insert(self, s: st.Insert) -> Result:
        target = self.catalog.table(s.target)
        if s.query is None:
            count = native.write_values(self._run_context(self.home / "tmp"), target, s.columns, s.values)
            return Message(f"Wrote {count} row{'s' if count != 1 else ''} to {target.name}.")
        plan = plan_query(s.query, self.catalog)
        job_id, directory = self.jobs.new_directory()
        name = self.settings.get("pipeline.name") or f"insert-into_{target.name}"
        def start() -> tuple:  # also what a restart runs: the same query again, on the same checkpoint
            return native.start_insert(
                self._run_context(directory), plan, target, s.columns, job_id, directory / "checkpoint"
            )

        query, side = start()
        self.jobs.add(Job(job_id, name, s.source.text, query, directory, plan.bounded, side_queries=side, restart=start))
        self.settings.reset("pipeline.name")
        return JobStarted(job_id, name)

    def _delete(self, s: st.Delete) -> Result:
        """One tombstone per key the WHERE names, written by the table's upsert sink (planner/deletes.py)."""
        target = self.catalog.table(s.target)
        keys = deleted_keys(s, target)
        count = native.write_values(self._run_context(self.home / "tmp"), target, target.primary_key, keys, RowKind.DELETE)
        return Message(f"Deleted {count} key{'s' if count != 1 else ''} from {target.name}.")

    # jobs: STOP JOB [WITH SAVEPOINT], RESUME JOB (SHOW JOBS is in _show) -------------------------------------

    def _stop_job(self, s: st.StopJob) -> Result:
        if s.with_drain:
            raise UnsupportedFeatureError(
                "STOP JOB ... WITH DRAIN is not supported yet",
                hint="STOP JOB 'id' WITH SAVEPOINT stops the job after its running batch and keeps its state",
            )
        if not s.with_savepoint:
            job = self.jobs.stop(s.job_id)
            return Message(f"Job '{job.job_id}' ({job.name}) has been stopped.")
        live = self.jobs.jobs.get(s.job_id)
        target = job_targets(live.statement) if live is not None else None
        job = self.jobs.stop(s.job_id, savepoint=True, target=target)
        return Message(
            f"Job '{job.job_id}' ({job.name}) has been stopped with a savepoint: {job.directory}\n"
            f"RESUME JOB '{job.job_id}' continues it, also from a new shell."
        )

    def _resume_job(self, s: st.ResumeJob) -> Result:
        """Run the job's INSERT again on its own directory: Spark continues from the checkpoint kept there."""
        from shell.errors import StreamshellError
        from shell.sql.parse import parse_script

        saved = self.jobs.resumable(s.job_id)
        statements = parse_script(saved.statement)
        if len(statements) != 1 or not isinstance(statements[0], (st.Insert, st.StatementSet)):
            raise UnsupportedFeatureError(f"job '{s.job_id}' cannot be resumed: its statement is not one INSERT")
        before = self.settings.values.get("pipeline.name")
        self.settings.set("pipeline.name", saved.name)
        try:
            with self.jobs.resuming(saved.job_id):
                return self.execute(statements[0])
        except StreamshellError as exc:  # positions in the saved statement mean nothing to the user
            hint = exc.hint or "RESUME JOB runs the job's INSERT again: its tables must still exist (a TEMPORARY table ends with its shell)"
            raise type(exc)(f"RESUME JOB '{s.job_id}': {exc.message}", hint=hint) from exc
        finally:
            if before is None:
                self.settings.reset("pipeline.name")
            else:
                self.settings.set("pipeline.name", before)

    def _explain(self, s: st.Explain) -> Result:
        inner = s.statement
        query = inner.query if isinstance(inner, (st.Select, st.Insert)) else None
        if query is None:
            raise UnsupportedFeatureError(f"EXPLAIN {statement_name(inner)} is not supported", hint="EXPLAIN a SELECT or INSERT")
        plan = plan_query(query, self.catalog)
        frame = native.build_frame(self._run_context(self.home / "tmp" / "explain"), plan).frame
        planned = frame.select("*")  # a Dataset of its own: spark.sql()'s cannot plan a streaming source
        spark_plan = planned._sc._jvm.PythonSQLUtils.explainString(planned._jdf.queryExecution(), "simple")
        return Text(redact("== streamshell plan ==\n" + "\n".join(plan.describe()) + "\n\n" + str(spark_plan)))

    # shell statements ------------------------------------------------------------------------------------------

    def _help(self, s: st.Help) -> Result:
        from shell.commands import help_text

        return Text(help_text(s.topic))

    def _set(self, s: st.Set) -> Result:
        if s.key is None:
            return Rows(["key", "value"], [(k, redact_value(k, v)) for k, v in self.settings.effective().items()])
        self.settings.set(s.key, s.value or "")
        return Message("Session property has been set.")

    def _reset(self, s: st.Reset) -> Result:
        self.settings.reset(s.key)
        if s.key is None:
            return Message("All session properties have been set to their default values.")
        return Message("Session property has been reset.")

    def _show(self, s: st.Show) -> Result:
        kind = s.kind.upper()
        if kind == "TABLES":
            return Rows(["table name"], [(n,) for n in self.catalog.names(TableDef)])
        if kind == "VIEWS":
            return Rows(["view name"], [(n,) for n in self.catalog.names(ViewDef)])
        if kind == "JOBS":
            return Rows(JOB_COLUMNS, self.jobs.rows())
        if kind == "FUNCTIONS":
            from shell.sql.translate import FUNCTION_NAMES

            return Rows(["function name"], [(n,) for n in sorted(FUNCTION_NAMES)])
        raise UnsupportedFeatureError(f"SHOW {kind} is not supported")

    def _show_create(self, s: st.ShowCreate) -> Result:
        if s.is_view:
            view = self.catalog.view(s.name)
            return Text(redact(f"CREATE VIEW {view.name} AS\n{view.query_sql}"))
        table = self.catalog.table(s.name)
        hidden = secret_keys(table)
        return Text(create_table_sql(table, redact=lambda k, v: REDACTED if k in hidden else redact_value(k, v)))

    def _show_errors(self, s: st.ShowErrors) -> Result:
        table = self.catalog.table(s.table)
        letters = read_dead_letters(dead_letter_dir(table, self.home / "errors"), s.limit)
        return Rows(["seen at", "position", "error", "key", "value"], [tuple(vars(d).values()) for d in letters])

    def _describe(self, s: st.Describe) -> Result:
        table = self.catalog.table(s.name)
        key = {k.lower() for k in table.primary_key}
        rows = []
        for column in table.columns:
            extras = []
            if column.kind.name == "COMPUTED":
                extras.append(f"AS {column.expression}")
            elif column.kind.name == "METADATA":
                extras.append("METADATA" + (f" FROM '{column.metadata_key}'" if column.metadata_key else ""))
                if column.virtual:
                    extras.append("VIRTUAL")
            watermark = table.watermark.expression if table.watermark and table.watermark.column.lower() == column.name.lower() else None
            null = "FALSE" if (column.name.lower() in key or not column.nullable) else "TRUE"
            pk = f"PRI({', '.join(table.primary_key)})" if column.name.lower() in key else None
            rows.append((column.name, column.data_type, null, pk, " ".join(extras) or None, watermark))
        return Rows(["name", "type", "null", "key", "extras", "watermark"], rows)


def job_targets(statement_text: str) -> str | None:
    """The table(s) a job's INSERT statement writes, for its savepoint record (None if it does not parse)."""
    from shell.errors import StreamshellError
    from shell.sql.parse import parse_script

    try:
        statements = parse_script(statement_text)
    except StreamshellError:
        return None
    targets = []
    for statement in statements:
        inserts = statement.inserts if isinstance(statement, st.StatementSet) else [statement]
        targets += [i.target for i in inserts if isinstance(i, st.Insert)]
    return ", ".join(targets) or None


def statement_name(statement: object) -> str:
    """`ShowErrors` -> `SHOW ERRORS`, for messages about statements we cannot run."""
    name = type(statement).__name__
    return "".join(f" {c}" if c.isupper() else c for c in name).strip().upper()

