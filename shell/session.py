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

from shell.catalog.alter import altered
from shell.catalog.like import apply_like
from shell.catalog.model import Column, TableDef, ViewDef
from shell.catalogs import commands as catalog_commands
from shell.catalogs.catalogs import Catalogs
from shell.changes import RowKind
from shell.config import Settings, read_config_file
from shell.connectors.registry import resolved, secret_keys, validate_table
from shell.engine import query as engine_query
from shell.engine import sinks
from shell.engine.bad_records import dead_letter_dir, read_dead_letters
from shell.engine.spark import SparkRuntime
from shell.inspect.commands import describe_topic, print_topic
from shell.errors import CatalogError, ExecutionError, StreamshellError, UnsupportedFeatureError
from shell.jobs.launcher import await_start, launch
from shell.jobs.record import JobRecord, utc_now
from shell.jobs.job import Job, JobSet
from shell.jobs.registry import JOB_COLUMNS, JobRegistry
from shell.jobs.savepoint import CHECKPOINT
from shell.logfiles import rotate_logs
from shell.planner.deletes import deleted_keys
from shell.planner.table_options import hinted_target
from shell.functions import calls as function_calls
from shell.planner.user_aggregates import plan_query
from shell.functions.statements import function_statements, show_functions, user_functions
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
from shell.sql.ddl import create_table_sql
from shell.sql.fragments import table_node, to_sql
from shell.sql.parse import parse_script
from shell.sql.positions import at_named_object, at_option
from shell.units import parse_duration_ms


@dataclass
class SessionOptions:
    home: Path
    master: str = "local[*]"
    settings: dict[str, str] = field(default_factory=dict)
    verbose: bool = False
    print_stream: TextIO | None = None  # where the print connector writes; stderr when None
    job_process: bool = False  # this session runs one detached job (shell.job_process), in its own process


class Session:
    """`runtime` may be given to share one Spark between sessions (tests); a session stops only its own."""

    def __init__(self, options: SessionOptions, runtime: SparkRuntime | None = None):
        self.options = options
        self.home = options.home
        self.settings = Settings()
        self.warnings: list[str] = []  # files that could not be used, one line each, for the front end to show
        config = read_config_file(self.home / "config.properties", self.warnings.append)
        for key, value in {**config, **options.settings}.items():
            notice = self.settings.set(key, value)
            if notice is not None and key in options.settings:  # the config file's are said as it is read
                self.warnings.append(f"-D {notice}")
        self.settings.keep_as_initial()
        self.catalog = Catalogs.open(self.home)
        self.warnings += self.catalog.warnings
        self.functions = user_functions(self.home, self.settings)
        self.warnings += self.functions.warnings
        if not options.job_process:
            rotate_logs(self.home / "log")
        self.jobs = JobRegistry(self.home, self.settings, write_state=not options.job_process)
        self.owns_runtime = runtime is None
        self.runtime = runtime or SparkRuntime(
            options.master, self.settings.spark_conf(), self.home / "log" / "spark.log"
        )
        self.catalog.spark = self.spark_session
        self.handlers: dict[type, Callable] = {
            st.CreateTable: self._create_table,
            st.CreateView: self._create_view,
            st.DropTable: self._drop,
            st.AlterTableSet: self._alter_table,
            st.AlterTable: self._alter_table_schema,
            st.AlterView: self._alter_view,
            st.Select: self._select,
            st.Insert: self._insert,
            st.StatementSet: self._statement_set,
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
            st.DescribeJob: self._describe_job,
            st.ShowErrors: self._show_errors,
            st.PrintTopic: lambda s: print_topic(self, s),
            st.DescribeTopic: lambda s: describe_topic(self, s),
            **function_statements(self),
            **{kind: self._on_catalogs(handler) for kind, handler in catalog_commands.HANDLERS.items()},
        }

    def spark_session(self):  # noqa: ANN201 - a SparkSession, started if it was not
        return self.runtime.get()

    def _on_catalogs(self, handler: Callable) -> Callable:
        return lambda s: handler(self.catalog, s)  # the session's catalogs as they are then (a job replaces them)

    # the core API ----------------------------------------------------------------------------------------------

    def execute(self, statement: st.Statement) -> Result:
        handler = self.handlers.get(type(statement))
        if handler is None:
            raise UnsupportedFeatureError(f"{statement_name(statement)} is not supported yet")
        try:
            with function_calls.active(self.functions):  # the translator finds this session's functions
                return handler(statement)
        except CatalogError as exc:  # `unknown table 'x'`: the caret goes on x, not on the statement's start
            raise at_named_object(exc, statement.node) from exc.__cause__

    def needs_spark(self, statement: st.Statement) -> bool:
        """Whether the statement runs on the shell's own Spark (a detached job brings its own)."""
        if isinstance(statement, st.CreateTable) and statement.query is not None:
            return True  # the query's column types come from Spark's analysis
        if isinstance(statement, (st.StatementSet, st.ResumeJob)) or (isinstance(statement, st.Insert) and statement.query is not None):
            return not self.detached_jobs()
        return isinstance(statement, (st.Select, st.Insert, st.Delete, st.Explain))

    def detached_jobs(self) -> bool:
        """Whether INSERT starts a job process (`execution.target` = 'detached', the default) rather than running
        the job in this process ('embedded': the job ends with the shell, as Flink's local mini-cluster)."""
        return not self.options.job_process and self.settings.get("execution.target") != "embedded"

    def start_spark(self) -> None:
        self.runtime.start()

    def result_mode(self, interactive: bool) -> str:
        chosen = self.settings.get("sql-client.execution.result-mode")
        if chosen is None:
            return "table" if interactive else "tableau"
        return "tableau" if chosen == "table" and not interactive else chosen

    def max_column_width(self) -> int:
        width = self.settings.get("table.display.max-column-width") or self.settings.get("sql-client.display.max-column-width")
        return int(width or 40)

    def close(self) -> None:
        """Stop what ends with the shell: its SELECTs and embedded jobs. Detached jobs keep running."""
        self.jobs.stop_all()
        if self.owns_runtime:
            self.runtime.stop()

    # DDL -------------------------------------------------------------------------------------------------------

    def _create_table(self, s: st.CreateTable) -> Result:
        if s.query is not None:
            return self._create_table_as(s)
        table = apply_like(s.table, self.catalog.table(s.table.like.source)) if s.table.like else s.table
        try:
            validate_table(table)
        except StreamshellError as error:  # pointed at the option it is about
            raise at_option(error, s.node) from None
        created = self.catalog.add(table, temporary=s.temporary, if_not_exists=s.if_not_exists)
        return Message("Table has been created." if created else f"Table '{table.name}' already exists; skipped."
                       if s.if_not_exists else f"Table '{table.name}' already exists with this definition; unchanged.")

    def _create_table_as(self, s: st.CreateTable) -> Result:
        """CREATE TABLE ... AS query: the table takes the query's columns (as Spark types them) and the keys it
        declares, then a job fills it, as Flink's CTAS does. The table is removed again if the job cannot start."""
        if s.if_not_exists and self.catalog.find(s.table.name) is not None:
            return Message(f"Table '{s.table.name}' already exists; skipped.")
        plan = plan_query(s.query, self.catalog, self.state_ttl())
        from shell.engine.schema import result_columns
        from shell.sql.spark_types import flink_type

        produced = result_columns(self._run_context(self.home / "tmp"), plan)
        table = replace(s.table, columns=[Column(name, flink_type(kind)) for name, kind in produced])
        validate_table(table)
        self.catalog.add(table, temporary=s.temporary)
        insert_sql = f"INSERT INTO {to_sql(table_node(table.name))}\n{to_sql(s.query, pretty=True)}"
        (insert,) = parse_script(insert_sql)
        try:
            return self._start_job(insert, [insert])
        except BaseException:
            self.catalog.drop(table.name, TableDef, if_exists=True)
            raise

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
        if s.if_exists and not isinstance(self.catalog.find(s.name), TableDef):
            return Message(f"Table '{s.name}' does not exist; skipped.")
        table = self.catalog.table(s.name)
        changed = replace(table, options={**table.options, **s.options})
        try:
            validate_table(changed)
        except StreamshellError as error:
            raise at_option(error, s.node) from None
        self.catalog.replace(changed)
        return Message("Table has been altered.")

    def _alter_table_schema(self, s: st.AlterTable) -> Result:
        if s.if_exists and not isinstance(self.catalog.find(s.name), TableDef):
            return Message(f"Table '{s.name}' does not exist; skipped.")
        table = self.catalog.table(s.name)
        if s.new_name is not None:
            self.catalog.rename(s.name, s.new_name)
            return Message("Table has been altered.")
        changed = altered(table, s.change)
        validate_table(changed)
        self.catalog.replace(changed)
        return Message("Table has been altered.")

    def _alter_view(self, s: st.AlterView) -> Result:
        view = self.catalog.view(s.name)
        if s.new_name is not None:
            self.catalog.rename(s.name, s.new_name)
        else:
            plan_query(s.query, self.catalog)  # the new query must run, as at CREATE VIEW
            self.catalog.replace(replace(view, query_sql=s.query_sql))
        return Message("View has been altered.")

    # queries and jobs ------------------------------------------------------------------------------------------

    def _run_context(self, work_dir: Path) -> engine_query.RunContext:
        return engine_query.RunContext(
            spark=self.functions.with_registered(self.runtime.get(), self.home / "tmp" / "python-files"),
            work_dir=work_dir,
            trigger_ms=self.settings.trigger_ms(),
            errors_trigger_ms=parse_duration_ms(self.settings.get("table.exec.errors.interval") or "10 s"),
            print_stream=self.options.print_stream,
            errors_dir=self.home / "errors",
            spark_conf=self.settings.spark_conf(),
            layout=(int(self.settings.get("table.exec.changelog.buckets")),
                    int(self.settings.get("table.exec.changelog.sub-buckets"))),
            local_copies=self.settings.get("table.exec.changelog.local-copies") == "true",
            jvm_stages=self.settings.get("table.exec.changelog.jvm-stages") == "true",
            net_changes=self.settings.get("table.exec.changelog.sink-netting") == "true",
            state_ttl_ms=self._state_ttl_ms(),
            max_rows_per_batch=int(self.settings.get("sql-client.display.max-rows-per-batch") or 10_000),
            real_time=self.settings.get("execution.latency") == "low",
        )

    def _state_ttl_ms(self) -> int:
        return parse_duration_ms(self.settings.get("table.exec.state.ttl") or "0")

    def state_ttl(self) -> bool:
        """Whether `table.exec.state.ttl` is set (a regular join then runs in the keyed stage, which expires it)."""
        return self._state_ttl_ms() > 0

    def _select(self, s: st.Select) -> ChangeStream:
        plan = plan_query(s.query, self.catalog, self.state_ttl())
        work_dir = self.home / "tmp" / f"select-{uuid.uuid4().hex[:8]}"
        stream = engine_query.start_select(self._run_context(work_dir), plan)
        cleanup = stream.cancel_callback

        def cancel_and_clean() -> None:
            if cleanup is not None:
                cleanup()
            shutil.rmtree(work_dir, ignore_errors=True)

        stream.cancel_callback = cancel_and_clean
        return stream

    def _insert(self, s: st.Insert) -> Result:
        refuse_overwrite(s)
        target = hinted_target(self.catalog.table(s.target), s.node)
        if s.query is None:
            count = sinks.write_values(self._run_context(self.home / "tmp"), target, s.columns, s.values)
            return Message(f"Wrote {count} row{'s' if count != 1 else ''} to {target.name}.")
        return self._start_job(s, [s])

    def _statement_set(self, s: st.StatementSet) -> Result:
        """Several INSERTs as one job: one query each, each with its own checkpoint, started and stopped together."""
        for insert in s.inserts:
            refuse_overwrite(insert)
            if insert.query is None:
                raise UnsupportedFeatureError(
                    "INSERT ... VALUES in a statement set is not supported",
                    line=insert.source.line, col=insert.source.col,
                    hint="run the INSERT ... VALUES on its own before the statement set",
                )
        return self._start_job(s, s.inserts)

    def _start_job(self, statement: st.Statement, inserts: list[st.Insert]) -> Result:
        """Plan every INSERT here (so a wrong one fails now, with its position), then run the job: in a job
        process of its own (detached), or in this process."""
        planned = [(i, hinted_target(self.catalog.table(i.target), i.node),
                    plan_query(i.query, self.catalog, self.state_ttl()))
                   for i in inserts]
        if not self.options.job_process:  # a sink's broker that does not answer fails the statement, not the job
            for target in {t.name: t for _, t, _ in planned}.values():  # (a broker lost later: the restart strategy)
                sinks.sink_connector(target).require_broker(resolved(target))
        targets = ", ".join(dict.fromkeys(t.name for _, t, _ in planned))
        chosen = self.settings.get("pipeline.name")
        name = chosen or "insert-into_" + "_".join(dict.fromkeys(t.name for _, t, _ in planned))
        if self.jobs._resuming is None:  # a name is unique among running jobs: STOP JOB 'name' finds one
            taken = self.jobs.running_named(name)
            if taken is not None and chosen:
                raise ExecutionError(
                    f"a running job is already named '{name}' ({taken.job_id})",
                    hint="SET 'pipeline.name' to another name, or STOP JOB that one first",
                )
            number = 2
            while taken is not None:  # a default name gets a number: insert-into_t-2
                name, number = f"{name.rsplit('-', 1)[0] if number > 2 else name}-{number}", number + 1
                taken = self.jobs.running_named(name)
        job_id, directory = self.jobs.new_directory()
        record = JobRecord(job_id, name, statement.source.text, targets, str(directory / CHECKPOINT), utc_now(),
                           settings=dict(self.settings.values), catalog=self.catalog.snapshot(),
                           functions=self.functions.snapshot(),
                           master=self.options.master)  # fmt: skip
        self.settings.reset("pipeline.name")
        if self.detached_jobs():
            return self._launch(record, directory)
        parts = []
        for index, (insert, target, plan) in enumerate(planned):
            checkpoint_name = CHECKPOINT if index == 0 else f"{CHECKPOINT}-{index}"

            def start(insert=insert, target=target, plan=plan, checkpoint_name=checkpoint_name) -> tuple:
                # also what a restart runs: the same query again, on the same checkpoint
                return engine_query.start_insert(self._run_context(directory), plan, target, insert.columns,
                                           job_id if index == 0 else f"{job_id}-{index}", directory / checkpoint_name)

            try:
                query, side = start()
            except Exception:
                for started in parts:
                    started.stop()
                raise
            parts.append(Job(job_id, name, statement.source.text, query, directory, plan.bounded, side_queries=side,
                             restart=start, checkpoint_name=checkpoint_name))  # fmt: skip
        job = parts[0] if len(parts) == 1 else JobSet(parts)
        self.jobs.add(job, None if self.options.job_process else record)
        return JobStarted(job_id, name)

    def _launch(self, record: JobRecord, directory: Path) -> Result:
        """Start the job's own process and wait until it runs (or raise what stopped it)."""
        try:
            record.write(directory)
        except OSError as exc:
            raise ExecutionError(f"cannot write the job's record in {directory}: {exc.strerror or exc}") from None
        self.jobs.used_savepoint(directory)
        try:
            launch(directory)
        except OSError as exc:  # the job's folder cannot take its state (a file in the way, a full disk)
            where = getattr(exc, "filename2", None) or exc.filename or directory
            raise ExecutionError(f"cannot start the job's process in {directory}: {where}: {exc.strerror or exc}",
                                 hint="fix or move that file away, then run the statement again") from None
        job = self.jobs.detached(directory)
        try:
            await_start(job)
        except StreamshellError:
            if self.jobs._resuming is None:  # a job that never ran leaves nothing behind
                shutil.rmtree(directory, ignore_errors=True)
                self.jobs.started.remove(job.job_id)
            raise
        return JobStarted(record.job_id, record.name)

    def _delete(self, s: st.Delete) -> Result:
        """One tombstone per key the WHERE names, written by the table's upsert sink (planner/deletes.py)."""
        target = self.catalog.table(s.target)
        keys = deleted_keys(s, target)
        count = sinks.write_values(self._run_context(self.home / "tmp"), target, target.primary_key, keys, RowKind.DELETE)
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
        job = self.jobs.stop(s.job_id, savepoint=True)
        return Message(
            f"Job '{job.job_id}' ({job.name}) has been stopped with a savepoint: {job.directory}\n"
            f"RESUME JOB '{job.job_id}' continues it, also from a new shell."
        )

    def _resume_job(self, s: st.ResumeJob) -> Result:
        """Run the job's statement again on its own directory: Spark continues from the checkpoint kept there
        (same query id, so a file sink writes nothing twice). A detached job starts its process again, with the
        settings and catalog its record keeps."""
        from shell.sql.parse import parse_script

        record = self.jobs.resumable(s.job_id)  # by id or by name
        statements = parse_script(record.statement)
        if len(statements) != 1 or not isinstance(statements[0], (st.Insert, st.StatementSet)):
            raise UnsupportedFeatureError(f"job '{s.job_id}' cannot be resumed: its statement is not one INSERT")
        if self.detached_jobs():
            if record.catalog is None:  # a record from before catalogs were kept: today's definitions
                record = replace(record, catalog=self.catalog.snapshot(), settings=dict(self.settings.values),
                                 master=self.options.master, stopped_at=None)  # fmt: skip
            with self.jobs.resuming(record.job_id):
                return self._resumed(s, lambda: self._launch(record, self.jobs_dir(record.job_id)))
        before = self.settings.values.get("pipeline.name")
        self.settings.set("pipeline.name", record.name)
        try:
            with self.jobs.resuming(record.job_id):
                return self._resumed(s, lambda: self.execute(statements[0]))
        finally:
            if before is None:
                self.settings.reset("pipeline.name")
            else:
                self.settings.set("pipeline.name", before)

    def _describe_job(self, s: st.DescribeJob) -> Result:
        rows = [(k, redact_value(k.removeprefix("setting "), v) if k.startswith("setting ") else
                 redact(v) if isinstance(v, str) else v) for k, v in self.jobs.describe(s.job_id)]  # fmt: skip
        return Rows(["property", "value"], rows)

    def _resumed(self, s: st.ResumeJob, run: Callable[[], Result]) -> Result:
        try:
            return run()
        except StreamshellError as exc:  # positions in the saved statement mean nothing to the user
            hint = exc.hint or "RESUME JOB runs the job's INSERT again: its tables must still exist (a TEMPORARY table ends with its shell)"
            raise type(exc)(f"RESUME JOB '{s.job_id}': {exc.message}", hint=hint) from exc

    def jobs_dir(self, job_id: str) -> Path:
        return self.jobs.jobs_dir / job_id

    def _explain(self, s: st.Explain) -> Result:
        refuse_explain_details(s)
        inner = s.statement
        query = inner.query if isinstance(inner, (st.Select, st.Insert)) else None
        if query is None:
            raise UnsupportedFeatureError(f"EXPLAIN {statement_name(inner)} is not supported", hint="EXPLAIN a SELECT or INSERT")
        plan = plan_query(query, self.catalog, self.state_ttl())
        # a folder of its own each time: what a job keeps there (its stages' layout) must not outlive the EXPLAIN
        work_dir = self.home / "tmp" / f"explain-{uuid.uuid4().hex[:8]}"
        try:
            frame = engine_query.build_frame(self._run_context(work_dir), plan).frame
            planned = frame.select("*")  # a Dataset of its own: spark.sql()'s cannot plan a streaming source
            spark_plan = planned._sc._jvm.PythonSQLUtils.explainString(planned._jdf.queryExecution(), "simple")
        finally:
            shutil.rmtree(work_dir, ignore_errors=True)
        return Text(redact("== streamshell plan ==\n" + "\n".join(plan.describe()) + "\n\n" + str(spark_plan)))

    # shell statements ------------------------------------------------------------------------------------------

    def _help(self, s: st.Help) -> Result:
        from shell.commands import help_text

        return Text(help_text(s.topic))

    def _set(self, s: st.Set) -> Result:
        if s.key is None:
            return Rows(["key", "value"], [(k, redact_value(k, v)) for k, v in self.settings.effective().items()])
        notice = self.settings.set(s.key, s.value or "")
        if notice is not None:
            return Message(f"Session property has been set; {notice}.", level="warning")
        return Message("Session property has been set.")

    def _reset(self, s: st.Reset) -> Result:
        self.settings.reset(s.key)
        if s.key is None:
            return Message("All session properties have been set to their default values.")  # Flink's words
        return Message("Session property has been reset.")

    def _show(self, s: st.Show) -> Result:
        kind = s.kind.upper()
        shown = catalog_commands.show(self.catalog, s)
        if shown is not None:
            return shown
        if kind == "JOBS":  # [NOT] LIKE on the job's name, as SHOW TABLES on a table's
            keep = catalog_commands.like(s.like, s.not_like)
            return Rows(JOB_COLUMNS, [row for row in self.jobs.rows() if keep(row[JOB_COLUMNS.index("name")])])
        if kind == "FUNCTIONS":
            return show_functions(self, s)
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


# Flink's EXPLAIN details streamshell does not carry out, and why (CHANGELOG_MODE is: every EXPLAIN shows it)
EXPLAIN_NOT_CARRIED_OUT = {
    "ESTIMATED_COST": "Spark's streaming planner has no cost estimates to show",
    "JSON_EXECUTION_PLAN": "there is no JSON form of a streamshell plan",
    "PLAN_ADVICE": "streamshell gives no plan advice",
}


def refuse_explain_details(explain: st.Explain) -> None:
    """EXPLAIN with a detail streamshell does not carry out is refused with the reason, not shown without it."""
    refused = [d for d in explain.details if d in EXPLAIN_NOT_CARRIED_OUT]
    if refused:
        raise UnsupportedFeatureError(
            f"EXPLAIN {refused[0]} is not supported: {EXPLAIN_NOT_CARRIED_OUT[refused[0]]}",
            **position(explain),
            hint="EXPLAIN CHANGELOG_MODE <query> (or plain EXPLAIN) shows the plan with each operator's changelog mode",
        )


def position(statement: st.Statement) -> dict:
    """The statement's line and column for an error about it (none when it was made, not parsed)."""
    return {"line": statement.source.line, "col": statement.source.col} if statement.source is not None else {}


def refuse_overwrite(insert: st.Insert) -> None:
    """INSERT OVERWRITE replaces a table's content, which a streaming job cannot do (Flink refuses it in streaming
    mode too): it is refused, not run as INSERT INTO."""
    if insert.overwrite:
        raise UnsupportedFeatureError(
            "INSERT OVERWRITE is not supported: a streaming job appends to its target or updates it by key",
            **position(insert), hint="INSERT INTO the table (an upsert table's rows are replaced by key)",
        )


def statement_name(statement: object) -> str:
    """`ShowErrors` -> `SHOW ERRORS`, for messages about statements we cannot run."""
    name = type(statement).__name__
    return "".join(f" {c}" if c.isupper() else c for c in name).strip().upper()

