"""Reads scripts/FlinkConfigKeys.java's lines on stdin and prints shell/flink_keys.py (run by scripts/flink-config-keys).

Kept: the keys a Flink user may SET or put in an init file (its configuration); left out: keys Flink hides from its
docs, and the options of tables, connectors, formats and catalogs (WITH (...) options, not settings).
"""

import sys

TABLE_OPTION_CLASSES = {
    "FileSystemConnectorOptions", "DataGenConnectorOptions", "CsvFormatOptions", "JsonFormatOptions", "LookupOptions",
    "LookupJoinHintOptions", "PrintConnectorOptions", "SinkOptions", "SourceReaderOptions", "AsyncSinkConnectorOptions",
    "RawFormatOptions", "CanalJsonFormatOptions", "DebeziumJsonFormatOptions", "LegacyCsvDynamicTableSinkOptions",
    "PythonDynamicTableOptions", "GenericInMemoryCatalogFactoryOptions", "CommonCatalogOptions", "CommonModuleOptions",
    "ArrowTableSourceOptions", "VectorSearchRuntimeConfigOptions", "EventOptions",
}


def main() -> None:
    version = sys.argv[1]
    keys: dict[str, str] = {}
    for line in sys.stdin:
        key, _, about = line.rstrip("\n").partition("\t")
        parts = about.split(" ")
        renamed = "old-name-of" in parts
        if parts[0] in TABLE_OPTION_CLASSES or "hidden" in parts or "<" in key or ("." not in key and not renamed):
            continue  # a key without a dot is a table's option (`timeout`), unless it is a setting's old name
        keys[key] = parts[parts.index("old-name-of") + 1] if "old-name-of" in parts else ""
    print(f'''"""Flink {version}'s documented configuration keys, with the key each old name now has ("" for a current key).

Written by scripts/flink-config-keys from the ConfigOption declarations in PyFlink's jars; do not edit. SET and the
config file know every one of them (shell/flink_settings.py says what each does here).
"""

FLINK_VERSION = "{version}"

KEYS: dict[str, str] = {{''')
    for key in sorted(keys):
        print(f"    {key!r}: {keys[key]!r},".replace("'", '"'))
    print("}")


if __name__ == "__main__":
    main()
