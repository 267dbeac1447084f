"""Making the user's Python functions callable from a Spark session's SQL, and their modules reach the executors.

Why it exists: the translated SQL calls a user function by its name; Spark finds it among the session's temporary
functions, registered here (as `udf__<name>`: see spark_name): a scalar function as a Python UDF (`func_type`
'pandas': a pandas UDF, fed by Arrow a batch at a time), a table function as a Python UDTF (and a second one, `udf__<name>__outer`, giving a row of NULLs when
the function gives none, for LEFT JOIN LATERAL: Spark's streaming queries refuse an outer lateral join, an inner
one over this function means the same), an aggregate as a Python UDF over the group's values, which the
translation gathers with collect_list (functions/calls.py). Every one runs in Spark's Python workers beside the
executors, none on the driver.

The files of `python.files` are given to Spark (`SparkContext.addPyFile`): the driver serves them and every
executor's Python workers put them on their path, on a cluster as locally. A folder is zipped first (Spark ships
files). Registration is remembered per Spark session, so a query re-registers only what changed.
"""

from __future__ import annotations

import hashlib
import os
import warnings
import zipfile
from pathlib import Path

from shell.functions.loading import LoadedFunction
from shell.udf import AGGREGATE, PANDAS, TABLE

PREFIX, OUTER_SUFFIX = "udf__", "__outer"
_registered: dict[tuple[int, str], tuple] = {}  # (id of the JVM session, Spark name) -> what was registered
_shipped: dict[int, set[str]] = {}  # id of the SparkContext's JVM -> files given to addPyFile


def spark_name(name: str) -> str:
    """The name a user function has in Spark: prefixed, since Spark resolves its built-in functions before a
    session's temporary ones (a user `median` would otherwise be Spark's)."""
    return f"{PREFIX}{name.lower()}"


def outer_name(name: str) -> str:
    return f"{spark_name(name)}{OUTER_SUFFIX}"


def ship_files(spark, paths: list[Path], zip_dir: Path) -> None:  # noqa: ANN001 - a SparkSession
    """Give each python.files entry to Spark once (a folder as a zip of its contents)."""
    context = spark.sparkContext
    shipped = _shipped.setdefault(id(context._jsc), set())
    for path in paths:
        file = zipped_folder(path, zip_dir) if path.is_dir() else path
        if str(file) not in shipped:
            context.addPyFile(str(file))
            shipped.add(str(file))


def zipped_folder(folder: Path, zip_dir: Path) -> Path:
    """A zip of a folder's Python files, named by their digest (the same contents give the same file)."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    digest = hashlib.sha256()
    for path in files:
        digest.update(f"{path.relative_to(folder).as_posix()}\0".encode())
        digest.update(path.read_bytes())
    target = zip_dir / f"{folder.name}-{digest.hexdigest()[:16]}.zip"
    if not target.is_file():
        zip_dir.mkdir(parents=True, exist_ok=True)
        partial = zip_dir / f".{target.name}.{os.getpid()}.tmp"
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in files:
                archive.write(path, path.relative_to(folder).as_posix())
        os.replace(partial, target)
    return target


def register(spark, loaded: LoadedFunction, outer: bool = False) -> None:  # noqa: ANN001 - a SparkSession
    """Register one function in `spark` under its name (lower case), unless it is registered as it is already.
    A Python function takes the files shipped when it is made: one made before a file was added is made again."""
    registered_name = outer_name(loaded.name) if outer else spark_name(loaded.name)
    key = (id(spark._jsparkSession), registered_name)
    includes = tuple(sorted(_shipped.get(id(spark.sparkContext._jsc), ())))
    identity = (loaded.definition, loaded.function, loaded.spark_types, loaded.func_type, includes)
    if _registered.get(key) == identity:
        return
    if loaded.kind == TABLE:
        _register_table(spark, registered_name, loaded, outer)
    else:
        _register_scalar(spark, registered_name, loaded)
    _registered[key] = identity


def unregister(spark, name: str) -> None:  # noqa: ANN001 - a SparkSession
    """Forget a dropped function in `spark` (its outer variant too)."""
    for registered_name in (spark_name(name), outer_name(name)):
        if _registered.pop((id(spark._jsparkSession), registered_name), None) is not None:
            spark.sql(f"DROP TEMPORARY FUNCTION IF EXISTS `{registered_name}`")


def _register_scalar(spark, registered_name: str, loaded: LoadedFunction) -> None:  # noqa: ANN001
    target, result = loaded.definition.target, loaded.spark_types[0]
    with warnings.catch_warnings():  # the wrappers have no type hints: the types are said, as PyFlink's users do
        warnings.simplefilter("ignore")
        spark.udf.register(registered_name, _scalar_udf(loaded, target, result))


def _scalar_udf(loaded: LoadedFunction, target: str, result: str):  # noqa: ANN202 - a pyspark UserDefinedFunction
    from pyspark.sql.functions import PandasUDFType, pandas_udf, udf

    from shell.functions import worker

    if loaded.kind == AGGREGATE:
        wrapper = (worker.Aggregate if loaded.func_type == PANDAS else worker.ListAggregate)(
            loaded.name, target, loaded.function)
        return udf(wrapper, returnType=result)
    if loaded.func_type == PANDAS:
        return pandas_udf(worker.PandasScalar(loaded.name, target, loaded.function), result, PandasUDFType.SCALAR)
    return udf(worker.Scalar(loaded.name, target, loaded.function), returnType=result)


def _register_table(spark, registered_name: str, loaded: LoadedFunction, outer: bool) -> None:  # noqa: ANN001
    from pyspark.sql.functions import udtf

    from shell.functions import worker

    schema = ", ".join(f"`{c}`: {t}" for c, t in zip(loaded.column_names, loaded.spark_types))
    cls = worker.table_function(loaded.name.lower(), loaded.definition.target, loaded.function,
                                len(loaded.spark_types), outer)
    spark.udtf.register(registered_name, udtf(cls, returnType=schema))
