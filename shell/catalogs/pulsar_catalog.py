"""A catalog over a Pulsar cluster: its namespaces are databases, its topics tables, their schemas the columns.

Why it exists: Pulsar keeps a schema per topic in its schema registry, so the tables of a cluster need not be
declared one by one (`CREATE CATALOG pulsar WITH ('type' = 'pulsar', ...)`, as Flink's Pulsar catalog does).
This module answers the three questions a catalog is asked, from Pulsar's admin REST API alone (no client, no
Spark):

* `databases()`: every namespace of every tenant, as 'tenant/namespace'.
* `tables(database)`: the namespace's persistent topics by their short names; a partitioned topic once, without
  its `-partition-N` suffix; system topics (`__change_events`, ...) left out.
* `table(database, name)`: a `pulsar` table reading that topic, its columns from the topic's schema
  (`/admin/v2/schemas/{tenant}/{namespace}/{topic}/schema`):

  | topic schema | columns | format |
  | --- | --- | --- |
  | AVRO | the record's fields (avro_schema.columns_of) | `avro`, with the registered schema as 'avro.schema' |
  | JSON | the record's fields (a JSON schema is an Avro record schema too) | `json` |
  | STRING | `value STRING` | `raw` |
  | INT8, INT16, INT32, INT64, BOOLEAN | `value` TINYINT, SMALLINT, INT, BIGINT, BOOLEAN | `raw` (big-endian, as Pulsar writes them) |
  | none, BYTES, any other | `value BYTES` | `raw` |

A message of a topic with an AVRO schema is the datum's Avro binary encoding without any header (Pulsar's
AvroSchema writes it so), which is what the `avro` format reads. Failures are one line: CatalogError naming what
could not be done, with a hint.
"""

from __future__ import annotations

import json
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from shell.catalog.model import Column, TableDef
from shell.connectors.pulsar import CLIENT_OPTIONS
from shell.connectors.pulsar_common import (
    SERVICE_URL_SCHEMES,
    PulsarAdmin,
    PulsarAdminError,
    PulsarConfig,
    split_partition,
)
from shell.errors import CatalogError, OptionError
from shell.formats.avro_schema import AvroSchemaError, columns_of, parse
from shell.options import OptionSpec
from shell.secrets import declare_secret_keys, redact_url_passwords
from shell.suggestions import suggest

DEFAULT_DATABASE = "public/default"
VALUE_COLUMN = "value"
# Pulsar's primitive schemas that the raw format reads as a number or a boolean; any other is read as bytes.
RAW_TYPES = {"STRING": "STRING", "INT8": "TINYINT", "INT16": "SMALLINT", "INT32": "INT", "INT64": "BIGINT",
             "BOOLEAN": "BOOLEAN"}  # fmt: skip
RECORD_FORMATS = {"AVRO": "avro", "JSON": "json"}
MISSING = object()  # `_get`: a 404 is an error
NOT_FOUND = object()  # `_get`: what a 404 returns when the caller tells it apart

OPTIONS: list[OptionSpec] = [
    OptionSpec("type", required=True, allowed=("pulsar",), description="'pulsar'"),
    OptionSpec("service-url", required=True, description="e.g. 'pulsar://localhost:6650': what its tables read"),
    OptionSpec("admin-url", required=True, description="e.g. 'http://localhost:8080': namespaces, topics, schemas"),
    OptionSpec("default-database", default=DEFAULT_DATABASE, description="the namespace 'tenant/namespace' in use"),
    *CLIENT_OPTIONS,
]  # fmt: skip
declare_secret_keys(s.key for s in OPTIONS if s.secret)

# Catalog option -> the same option of the `pulsar` tables it gives out.
TABLE_OPTIONS = ("auth-plugin", "auth-params", "authentication.token", "tls-trust-certs-file-path",
                 "tls-allow-insecure-connection")  # fmt: skip


@dataclass(frozen=True)
class PulsarCatalog:
    """The namespaces, topics and topic schemas of one Pulsar cluster, as databases, tables and columns."""

    service_url: str
    admin_url: str
    auth_plugin: str | None = None
    auth_params: str | None = field(default=None, repr=False)
    token: str | None = field(default=None, repr=False)
    tls_trust_certs_file_path: str | None = None
    tls_allow_insecure_connection: bool = False

    def __post_init__(self) -> None:
        if not self.service_url.startswith(SERVICE_URL_SCHEMES):
            raise OptionError(
                f"Pulsar catalog: 'service-url' must start with pulsar:// or pulsar+ssl://, got "
                f"'{redact_url_passwords(self.service_url)}'"
            )
        if not self.admin_url.startswith(("http://", "https://")):
            raise OptionError(
                f"Pulsar catalog: 'admin-url' must start with http:// or https://, got "
                f"'{redact_url_passwords(self.admin_url)}'",
                hint="e.g. 'http://localhost:8080'",
            )

    @classmethod
    def from_options(cls, options: dict[str, str]) -> PulsarCatalog:
        """A catalog from the options of CREATE CATALOG ... WITH (...) (Flink's keys; see OPTIONS)."""
        keys = [s.key for s in OPTIONS]
        for key in options:
            if key not in keys:
                hint = suggest(key, keys)
                listed = "supported options: " + ", ".join(keys)
                raise OptionError(f"unsupported option '{key}' for a Pulsar catalog", hint=f"{hint} ({listed})" if hint else listed)
        for spec in OPTIONS:
            if spec.required and not (options.get(spec.key) or "").strip():
                raise OptionError(f"a Pulsar catalog needs '{spec.key}'", hint=spec.description)
        if options["type"].strip().lower() != "pulsar":
            raise OptionError(f"catalog type '{options['type']}' is not 'pulsar'")
        insecure = (options.get("tls-allow-insecure-connection") or "false").strip().lower()
        if insecure not in ("true", "false"):
            raise OptionError(f"option 'tls-allow-insecure-connection' must be true or false, got '{insecure}'")
        return cls(
            service_url=options["service-url"].strip(),
            admin_url=options["admin-url"].strip().rstrip("/"),
            auth_plugin=(options.get("auth-plugin") or "").strip() or None,
            auth_params=options.get("auth-params") or None,
            token=(options.get("authentication.token") or "").strip() or None,
            tls_trust_certs_file_path=(options.get("tls-trust-certs-file-path") or "").strip() or None,
            tls_allow_insecure_connection=insecure == "true",
        )

    # ---- the catalog -----------------------------------------------------------------------------------------

    def databases(self) -> list[str]:
        """Every namespace of the cluster, as 'tenant/namespace', sorted."""
        tenants = self._get("/admin/v2/tenants", "list the tenants")
        found: list[str] = []
        for tenant in tenants or []:
            found += self._get(f"/admin/v2/namespaces/{_quote(tenant)}", f"list the namespaces of tenant '{tenant}'")
        return sorted(found)

    def tables(self, database: str) -> list[str]:
        """The namespace's topics by their short names, a partitioned topic once; CatalogError if it is unknown."""
        namespace = self._namespace(database)
        what = f"list the topics of '{database}'"
        partitioned = self._get(f"/admin/v2/persistent/{namespace}/partitioned", what, missing=NOT_FOUND)
        if partitioned is NOT_FOUND:
            raise CatalogError(
                f"Pulsar catalog: no database (namespace) '{database}'",
                hint=self._databases_hint(database),
            )
        names = {_short(t) for t in partitioned or []}
        for topic in self._get(f"/admin/v2/persistent/{namespace}", what, missing=[]) or []:
            names.add(_short(split_partition(topic)[0]))
        return sorted(n for n in names if not n.startswith("__"))

    def table(self, database: str, name: str) -> TableDef | None:
        """The `pulsar` table of topic `name` in namespace `database`, or None when there is no such topic."""
        if name not in self.tables(database):
            return None
        namespace = self._namespace(database)
        info = self._get(f"/admin/v2/schemas/{namespace}/{_quote(name)}/schema", f"read the schema of topic '{name}'",
                         missing=None)  # fmt: skip
        columns, format_options = self._columns(info, database, name)
        options = {
            "connector": "pulsar",
            "topic": f"persistent://{database}/{name}",
            "service-url": self.service_url,
            "admin-url": self.admin_url,
            **format_options,
        }
        options.update({k: v for k, v in self._auth_options().items() if v})
        return TableDef(name=name, columns=columns, options=options)

    # ---- helpers ---------------------------------------------------------------------------------------------

    def _columns(self, info: Any, database: str, name: str) -> tuple[list[Column], dict[str, str]]:
        kind = str((info or {}).get("type") or "NONE").upper()
        if kind in RECORD_FORMATS:
            definition = (info or {}).get("data") or ""
            try:
                schema = parse(definition) if isinstance(definition, str) else definition
                columns = columns_of(schema)
            except AvroSchemaError as exc:
                raise CatalogError(
                    f"Pulsar catalog: the {kind} schema of topic '{database}/{name}' cannot be read: {exc}",
                    hint="declare the table yourself with CREATE TABLE",
                ) from None
            options = {"format": RECORD_FORMATS[kind]}
            if kind == "AVRO":
                options["avro.schema"] = json.dumps(schema, separators=(",", ":"))
            return columns, options
        return [Column(VALUE_COLUMN, RAW_TYPES.get(kind, "BYTES"))], {"format": "raw"}

    def _auth_options(self) -> dict[str, str | None]:
        return {
            "auth-plugin": self.auth_plugin,
            "auth-params": self.auth_params,
            "authentication.token": self.token,
            "tls-trust-certs-file-path": self.tls_trust_certs_file_path,
            "tls-allow-insecure-connection": "true" if self.tls_allow_insecure_connection else None,
        }

    def _admin(self) -> PulsarAdmin:
        config = PulsarConfig(
            service_url=self.service_url,
            admin_url=self.admin_url,
            auth_plugin=self.auth_plugin,
            auth_params=self.auth_params or "",
            token=self.token,
            tls_trust_certs_file_path=self.tls_trust_certs_file_path,
            tls_allow_insecure_connection=self.tls_allow_insecure_connection,
        )
        return PulsarAdmin(config)

    def _get(self, path: str, what: str, missing: Any = MISSING) -> Any:
        """The JSON answer of one admin GET; `missing` on 404 (a CatalogError when no `missing` is given)."""
        try:
            answer = self._admin().get(path, missing=missing)
        except PulsarAdminError as exc:
            text = str(exc)
            if "HTTP 401" in text or "HTTP 403" in text:
                hint = "check the catalog's 'authentication.token' or 'auth-plugin' and 'auth-params'"
            elif "cannot reach" in text:
                hint = "check 'admin-url' (e.g. 'http://localhost:8080') and that the Pulsar broker is running"
            else:
                hint = None
            raise CatalogError(f"Pulsar catalog: cannot {what}: {text}", hint=hint) from None
        except (OSError, ValueError) as exc:  # a token file that cannot be read, an answer that is not JSON
            raise CatalogError(f"Pulsar catalog: cannot {what}: {exc}") from None
        if answer is MISSING:
            raise CatalogError(f"Pulsar catalog: cannot {what}: not found at {self.admin_url}")
        return answer

    def _namespace(self, database: str) -> str:
        parts = database.split("/")
        if len(parts) != 2 or not all(p.strip() for p in parts):
            raise CatalogError(
                f"Pulsar catalog: database '{database}' is not 'tenant/namespace'", hint="e.g. 'public/default'"
            )
        return "/".join(_quote(p) for p in parts)

    def _databases_hint(self, database: str) -> str:
        try:
            known = self.databases()
        except CatalogError:
            return "a database of a Pulsar catalog is a namespace, 'tenant/namespace'"
        close = suggest(database, known)
        listed = "databases: " + ", ".join(known)
        return f"{close} ({listed})" if close else listed


def _quote(part: str) -> str:
    return urllib.parse.quote(part, safe="")


def _short(topic: str) -> str:
    """'persistent://tenant/ns/name' -> 'name'."""
    return topic.split("://", 1)[-1].split("/", 2)[-1]
