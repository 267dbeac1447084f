"""pg_catalog and information_schema, made from streamshell's catalog, for the queries tools send on connect.

Why it exists: psql's `\\dt` and `\\d t`, DBeaver's navigator, Grafana's table and column pickers and JDBC's
DatabaseMetaData read PostgreSQL's system catalogs, not SHOW TABLES. Those queries are PostgreSQL SQL, not
streamshell's dialect, and need no Spark. So they run on an in-memory SQLite database holding the catalog
tables those tools read, filled from the connection's session: each database of the current catalog is a schema,
its tables and views are relations, their columns attributes with PostgreSQL types, primary keys constraints.
sqlglot translates the query from PostgreSQL to SQLite after a few rewrites SQLite needs (`'t'::regclass`,
`OPERATOR(pg_catalog.~)`, `= ANY(array)`, `pg_catalog.` functions), and PostgreSQL's functions tools call
(`format_type`, `pg_table_is_visible`, `current_setting`, ...) are SQLite functions here.

A catalog query this cannot answer is an error that says so (SQLSTATE 0A000), never an empty answer that would
look like "no tables". tests/gateway/test_gateway_catalog_queries.py replays the queries psql, DBeaver, Grafana and JDBC
send.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
from datetime import datetime, timezone
from typing import Any

import sqlglot
from sqlglot import exp

from shell import __version__
from shell.catalog.model import TableDef, ViewDef
from shell.gateway import pgtypes
from shell.gateway.results import Outcome, describe
from shell.secrets import redact

log = logging.getLogger("streamshell.gateway")

CATALOG_WORDS = re.compile(
    r"\b(pg_catalog|information_schema|pg_[a-z_]+)\b|"
    r"\b(version|current_schema|current_schemas|current_database|current_setting|set_config|pg_backend_pid|"
    r"txid_current|inet_server_addr|inet_server_port|has_[a-z_]+_privilege|obj_description|col_description|"
    r"format_type|quote_ident|current_user|session_user)\s*\(|"
    r"^\s*select\s+(current_user|session_user|user|current_catalog|current_role)\b",
    re.I,
)

OWNER = 10
PG_CATALOG, INFORMATION_SCHEMA, FIRST_SCHEMA, FIRST_RELATION = 11, 13000, 2200, 16384
DATABASE_OID = 16000

# table: columns ("name" text, "name:i" integer, "name:b" boolean)
TABLES = {
    "pg_namespace": "oid:i nspname nspowner:i nspacl",
    "pg_class": "oid:i relname relnamespace:i reltype:i reloftype:i relowner:i relam:i relfilenode:i reltablespace:i "
                "relpages:i reltuples:i relallvisible:i reltoastrelid:i relhasindex:b relisshared:b relpersistence "
                "relkind relnatts:i relchecks:i relhasrules:b relhastriggers:b relhassubclass:b relrowsecurity:b "
                "relforcerowsecurity:b relispopulated:b relreplident relispartition:b relrewrite:i relfrozenxid:i "
                "relminmxid:i relacl reloptions relpartbound",
    "pg_attribute": "attrelid:i attname atttypid:i attstattarget:i attlen:i attnum:i attndims:i attcacheoff:i "
                    "atttypmod:i attbyval:b attalign attstorage attcompression attnotnull:b atthasdef:b "
                    "atthasmissing:b attidentity attgenerated attisdropped:b attislocal:b attinhcount:i "
                    "attcollation:i attacl attoptions attfdwoptions attmissingval",
    "pg_type": "oid:i typname typnamespace:i typowner:i typlen:i typbyval:b typtype typcategory typispreferred:b "
               "typisdefined:b typdelim typrelid:i typsubscript typelem:i typarray:i typinput typoutput typreceive "
               "typsend typmodin typmodout typanalyze typalign typstorage typnotnull:b typbasetype:i typtypmod:i "
               "typndims:i typcollation:i typdefaultbin typdefault typacl",
    "pg_database": "oid:i datname datdba:i encoding:i datlocprovider datistemplate:b datallowconn:b datconnlimit:i "
                   "datfrozenxid:i datminmxid:i dattablespace:i datcollate datctype daticulocale datcollversion datacl",
    "pg_settings": "name setting unit category short_desc extra_desc context vartype source min_val max_val "
                   "enumvals boot_val reset_val sourcefile sourceline:i pending_restart:b",
    "pg_description": "objoid:i classoid:i objsubid:i description",
    "pg_shdescription": "objoid:i classoid:i description",
    "pg_attrdef": "oid:i adrelid:i adnum:i adbin",
    "pg_index": "indexrelid:i indrelid:i indnatts:i indnkeyatts:i indisunique:b indnullsnotdistinct:b "
                "indisprimary:b indisexclusion:b indimmediate:b indisclustered:b indisvalid:b indcheckxmin:b "
                "indisready:b indislive:b indisreplident:b indkey indcollation indclass indoption indexprs indpred",
    "pg_constraint": "oid:i conname connamespace:i contype condeferrable:b condeferred:b convalidated:b conrelid:i "
                     "contypid:i conindid:i conparentid:i confrelid:i confupdtype confdeltype confmatchtype "
                     "conislocal:b coninhcount:i connoinherit:b conkey confkey conpfeqop conppeqop conffeqop "
                     "confdelsetcols conexclop conbin",
    "pg_inherits": "inhrelid:i inhparent:i inhseqno:i inhdetachpending:b",
    "pg_am": "oid:i amname amhandler amtype",
    "pg_collation": "oid:i collname collnamespace:i collowner:i collprovider collisdeterministic:b collencoding:i "
                    "collcollate collctype",
    "pg_roles": "oid:i rolname rolsuper:b rolinherit:b rolcreaterole:b rolcreatedb:b rolcanlogin:b "
                "rolreplication:b rolconnlimit:i rolpassword rolvaliduntil rolbypassrls:b rolconfig",
    "pg_user": "usename usesysid:i usecreatedb:b usesuper:b userepl:b usebypassrls:b passwd valuntil useconfig",
    "pg_tablespace": "oid:i spcname spcowner:i spcacl spcoptions",
    "pg_proc": "oid:i proname pronamespace:i proowner:i prolang:i procost:i prorows:i provariadic:i prosupport "
               "prokind prosecdef:b proleakproof:b proisstrict:b proretset:b provolatile proparallel pronargs:i "
               "pronargdefaults:i prorettype:i proargtypes proallargtypes proargmodes proargnames proargdefaults "
               "protrftypes prosrc probin prosqlbody proconfig proacl",
    "pg_tables": "schemaname tablename tableowner tablespace hasindexes:b hasrules:b hastriggers:b rowsecurity:b",
    "pg_views": "schemaname viewname viewowner definition",
    "pg_matviews": "schemaname matviewname matviewowner tablespace hasindexes:b ispopulated:b definition",
    "pg_depend": "classid:i objid:i objsubid:i refclassid:i refobjid:i refobjsubid:i deptype",
    "pg_extension": "oid:i extname extowner:i extnamespace:i extrelocatable:b extversion extconfig extcondition",
    "pg_trigger": "oid:i tgrelid:i tgparentid:i tgname tgfoid:i tgtype:i tgenabled tgisinternal:b tgconstrrelid:i "
                  "tgconstrindid:i tgconstraint:i tgdeferrable:b tginitdeferred:b tgnargs:i tgattr tgargs tgqual "
                  "tgoldtable tgnewtable",
    "pg_rewrite": "oid:i rulename ev_class:i ev_type ev_enabled is_instead:b ev_qual ev_action",
    "pg_policy": "oid:i polname polrelid:i polcmd polpermissive:b polroles polqual polwithcheck",
    "pg_statistic_ext": "oid:i stxrelid:i stxname stxnamespace:i stxowner:i stxstattarget:i stxkeys stxkind stxexprs",
    "pg_publication": "oid:i pubname pubowner:i puballtables:b pubinsert:b pubupdate:b pubdelete:b pubtruncate:b "
                      "pubviaroot:b",
    "pg_publication_rel": "oid:i prpubid:i prrelid:i prqual prattrs",
    "pg_publication_namespace": "oid:i pnpubid:i pnnspid:i",
    "pg_foreign_table": "ftrelid:i ftserver:i ftoptions",
    "pg_foreign_server": "oid:i srvname srvowner:i srvfdw:i srvtype srvversion srvacl srvoptions",
    "pg_foreign_data_wrapper": "oid:i fdwname fdwowner:i fdwhandler:i fdwvalidator:i fdwacl fdwoptions",
    "pg_partitioned_table": "partrelid:i partstrat partnatts:i partdefid:i partattrs partclass partcollation partexprs",
    "pg_event_trigger": "oid:i evtname evtevent evtowner:i evtfoid:i evtenabled evttags",
    "pg_enum": "oid:i enumtypid:i enumsortorder:i enumlabel",
    "pg_range": "rngtypid:i rngsubtype:i rngmultitypid:i rngcollation:i rngsubopc:i rngcanonical rngsubdiff",
    "pg_sequence": "seqrelid:i seqtypid:i seqstart:i seqincrement:i seqmax:i seqmin:i seqcache:i seqcycle:b",
    "pg_operator": "oid:i oprname oprnamespace:i oprowner:i oprkind oprcanmerge:b oprcanhash:b oprleft:i "
                   "oprright:i oprresult:i oprcom:i oprnegate:i oprcode oprrest oprjoin",
    "pg_opclass": "oid:i opcmethod:i opcname opcnamespace:i opcowner:i opcfamily:i opcintype:i opcdefault:b opckeytype:i",
    "pg_language": "oid:i lanname lanowner:i lanispl:b lanpltrusted:b lanplcallfoid:i laninline:i lanvalidator:i lanacl",
    "pg_cast": "oid:i castsource:i casttarget:i castfunc:i castcontext castmethod",
    "pg_aggregate": "aggfnoid:i aggkind aggnumdirectargs:i aggtransfn aggfinalfn",
    "pg_auth_members": "oid:i roleid:i member:i grantor:i admin_option:b",
    "pg_default_acl": "oid:i defaclrole:i defaclnamespace:i defaclobjtype defaclacl",
    "pg_init_privs": "objoid:i classoid:i objsubid:i privtype initprivs",
    "pg_stat_activity": "datid:i datname pid:i leader_pid:i usesysid:i usename application_name client_addr "
                        "client_hostname client_port:i backend_start xact_start query_start state_change "
                        "wait_event_type wait_event state backend_xid backend_xmin query_id:i query backend_type",
    "pg_locks": "locktype database:i relation:i page:i tuple:i virtualxid transactionid classid:i objid:i "
                "objsubid:i virtualtransaction pid:i mode granted:b fastpath:b waitstart",
    "pg_stat_user_tables": "relid:i schemaname relname seq_scan:i n_live_tup:i n_dead_tup:i",
    "pg_get_keywords": "word catcode barelabel:b catdesc baredesc",
    "pg_available_extensions": "name default_version installed_version comment",
}
INFORMATION = {
    "schemata": "catalog_name schema_name schema_owner default_character_set_catalog default_character_set_schema "
                "default_character_set_name sql_path",
    "tables": "table_catalog table_schema table_name table_type self_referencing_column_name reference_generation "
              "user_defined_type_catalog user_defined_type_schema user_defined_type_name is_insertable_into "
              "is_typed commit_action",
    "columns": "table_catalog table_schema table_name column_name ordinal_position:i column_default is_nullable "
               "data_type character_maximum_length:i character_octet_length:i numeric_precision:i "
               "numeric_precision_radix:i numeric_scale:i datetime_precision:i interval_type interval_precision:i "
               "character_set_catalog character_set_schema character_set_name collation_catalog collation_schema "
               "collation_name domain_catalog domain_schema domain_name udt_catalog udt_schema udt_name "
               "scope_catalog scope_schema scope_name maximum_cardinality:i dtd_identifier is_self_referencing "
               "is_identity identity_generation identity_start identity_increment identity_maximum identity_minimum "
               "identity_cycle is_generated generation_expression is_updatable",
    "views": "table_catalog table_schema table_name view_definition check_option is_updatable is_insertable_into "
             "is_trigger_updatable is_trigger_deletable is_trigger_insertable_into",
    "table_constraints": "constraint_catalog constraint_schema constraint_name table_catalog table_schema table_name "
                         "constraint_type is_deferrable initially_deferred enforced nulls_distinct",
    "key_column_usage": "constraint_catalog constraint_schema constraint_name table_catalog table_schema table_name "
                        "column_name ordinal_position:i position_in_unique_constraint:i",
    "routines": "specific_catalog specific_schema specific_name routine_catalog routine_schema routine_name "
                "routine_type data_type external_language routine_definition",
    "parameters": "specific_catalog specific_schema specific_name ordinal_position:i parameter_mode parameter_name "
                  "data_type",
    "triggers": "trigger_catalog trigger_schema trigger_name event_manipulation event_object_catalog "
                "event_object_schema event_object_table action_order:i action_condition action_statement "
                "action_orientation action_timing",
    "character_sets": "character_set_catalog character_set_schema character_set_name character_repertoire "
                      "form_of_use default_collate_catalog default_collate_schema default_collate_name",
    "enabled_roles": "role_name",
}


def _columns(spec: str) -> list[tuple[str, str]]:
    out = []
    for item in spec.split():
        name, _, kind = item.partition(":")
        out.append((name, kind or "t"))
    return out


BOOL_COLUMNS = {name for spec in [*TABLES.values(), *INFORMATION.values()] for name, kind in _columns(spec) if kind == "b"}
BOOL_FUNCTIONS = {"pg_table_is_visible", "pg_type_is_visible", "pg_function_is_visible", "has_table_privilege",
                  "has_schema_privilege", "has_database_privilege", "has_column_privilege", "pg_has_role",
                  "has_any_column_privilege", "pg_is_in_recovery", "has_function_privilege"}  # fmt: skip


class CatalogQueryError(Exception):
    """A catalog query the gateway cannot answer (0A000)."""


def is_catalog_query(sql: str) -> bool:
    return CATALOG_WORDS.search(sql) is not None


# the data --------------------------------------------------------------------------------------------------------


class Snapshot:
    """The session's catalog as PostgreSQL's rows: schemas, relations and their columns, numbered."""

    def __init__(self, session: Any, pg: Any, user: str):
        self.session, self.pg, self.user = session, pg, user
        catalog = session.catalog
        self.catalog_name = catalog.current_catalog
        self.current = catalog.current_database
        self.schemas: list[tuple[int, str]] = []
        self.relations: list[tuple[int, int, str, Any]] = []  # oid, schema oid, name, definition
        oid = FIRST_RELATION
        for n, database in enumerate(self._databases(catalog)):
            schema_oid = FIRST_SCHEMA + n
            self.schemas.append((schema_oid, database))
            for kind in (TableDef, ViewDef):
                try:
                    names = catalog.names(kind, database)
                except Exception:  # noqa: BLE001 - a database that cannot be listed shows no relations
                    names = []
                for name in names:
                    found = catalog.find(f"`{database}`.`{name}`") if database != self.current else catalog.find(name)
                    if found is not None:
                        self.relations.append((oid, schema_oid, name, found))
                        oid += 1

    @staticmethod
    def _databases(catalog: Any) -> list[str]:
        try:
            names = list(catalog.databases())
        except Exception:  # noqa: BLE001 - an external catalog that cannot be reached: its current database only
            names = []
        current = catalog.current_database
        return [current] + [d for d in names if d.lower() != current.lower()]

    def schema_oid(self, name: str) -> int | None:
        return next((oid for oid, schema in self.schemas if schema.lower() == name.lower()), None)


def _fill(db: sqlite3.Connection, snap: Snapshot) -> None:
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in [*TABLES, *(f"information_schema.{t}" for t in INFORMATION)]}
    db_name = "streamshell"
    rows["pg_namespace"] += [dict(oid=PG_CATALOG, nspname="pg_catalog", nspowner=OWNER),
                             dict(oid=INFORMATION_SCHEMA, nspname="information_schema", nspowner=OWNER)]
    rows["pg_database"].append(dict(oid=DATABASE_OID, datname=db_name, datdba=OWNER, encoding=6, datlocprovider="c",
                                    datistemplate=False, datallowconn=True, datconnlimit=-1, dattablespace=1663,
                                    datcollate="C", datctype="C"))  # fmt: skip
    rows["pg_roles"].append(dict(oid=OWNER, rolname=snap.user, rolsuper=False, rolinherit=True, rolcreaterole=False,
                                 rolcreatedb=False, rolcanlogin=True, rolreplication=False, rolconnlimit=-1,
                                 rolbypassrls=False))  # fmt: skip
    rows["pg_user"].append(dict(usename=snap.user, usesysid=OWNER, usecreatedb=False, usesuper=False, userepl=False,
                                usebypassrls=False))  # fmt: skip
    rows["pg_tablespace"].append(dict(oid=1663, spcname="pg_default", spcowner=OWNER))
    rows["pg_am"] += [dict(oid=2, amname="heap", amtype="t")]
    rows["pg_language"] += [dict(oid=12, lanname="internal", lanowner=OWNER), dict(oid=14, lanname="sql", lanowner=OWNER)]
    rows["information_schema.character_sets"].append(dict(character_set_name="UTF8", character_repertoire="UCS",
                                                          form_of_use="UTF8", default_collate_name="C"))
    rows["information_schema.enabled_roles"].append(dict(role_name=snap.user))
    for name, value in snap.pg.parameters.items():
        rows["pg_settings"].append(dict(name=name, setting=value, context="user", vartype="string", source="session",
                                        boot_val=value, reset_val=value, pending_restart=False))
    for oid, name in pgtypes.TYPE_NAMES.items():
        rows["pg_type"].append(dict(oid=oid, typname=name, typnamespace=PG_CATALOG, typowner=OWNER,
                                    typlen=pgtypes.SIZES.get(oid, -1), typbyval=oid in pgtypes.SIZES and pgtypes.SIZES[oid] <= 8,
                                    typtype="b", typcategory=_category(oid), typispreferred=False, typisdefined=True,
                                    typdelim=",", typrelid=0, typelem=0, typarray=0, typinput=f"{name}in",
                                    typoutput=f"{name}out", typreceive=f"{name}recv", typsend=f"{name}send",
                                    typalign="i", typstorage="p", typnotnull=False, typbasetype=0, typtypmod=-1,
                                    typndims=0, typcollation=100 if oid in (pgtypes.TEXT, pgtypes.VARCHAR) else 0))  # fmt: skip
    for oid, name in snap.schemas:
        rows["pg_namespace"].append(dict(oid=oid, nspname=name, nspowner=OWNER))
        rows["information_schema.schemata"].append(dict(catalog_name=db_name, schema_name=name, schema_owner=snap.user))
    for oid, schema_oid, name, definition in snap.relations:
        schema = next(s for o, s in snap.schemas if o == schema_oid)
        is_view = isinstance(definition, ViewDef)
        columns = _relation_columns(definition)
        rows["pg_class"].append(dict(oid=oid, relname=name, relnamespace=schema_oid, reltype=0, reloftype=0,
                                     relowner=OWNER, relam=0 if is_view else 2, relfilenode=oid, reltablespace=0,
                                     relpages=0, reltuples=-1, relallvisible=0, reltoastrelid=0,
                                     relhasindex=False, relisshared=False, relpersistence="p",
                                     relkind="v" if is_view else "r", relnatts=len(columns), relchecks=0,
                                     relhasrules=is_view, relhastriggers=False, relhassubclass=False,
                                     relrowsecurity=False, relforcerowsecurity=False, relispopulated=True,
                                     relreplident="d", relispartition=False, relrewrite=0, relfrozenxid=0,
                                     relminmxid=0))  # fmt: skip
        if definition.comment:
            rows["pg_description"].append(dict(objoid=oid, classoid=1259, objsubid=0, description=definition.comment))
        if is_view:
            rows["pg_views"].append(dict(schemaname=schema, viewname=name, viewowner=snap.user, definition=definition.query_sql))
            rows["information_schema.views"].append(dict(table_catalog=db_name, table_schema=schema, table_name=name,
                                                         view_definition=definition.query_sql, check_option="NONE",
                                                         is_updatable="NO", is_insertable_into="NO"))  # fmt: skip
        else:
            rows["pg_tables"].append(dict(schemaname=schema, tablename=name, tableowner=snap.user, hasindexes=False,
                                          hasrules=False, hastriggers=False, rowsecurity=False))  # fmt: skip
        rows["information_schema.tables"].append(dict(table_catalog=db_name, table_schema=schema, table_name=name,
                                                      table_type="VIEW" if is_view else "BASE TABLE",
                                                      is_insertable_into="NO" if is_view else "YES", is_typed="NO"))  # fmt: skip
        key = [k.lower() for k in getattr(definition, "primary_key", [])]
        for number, (column, type_text, nullable, comment) in enumerate(columns, start=1):
            oid_type = pgtypes.oid_of_flink(type_text)
            typmod = pgtypes.typmod_of_flink(type_text) if oid_type in (pgtypes.NUMERIC, pgtypes.VARCHAR) else -1
            not_null = column.lower() in key or not nullable
            rows["pg_attribute"].append(dict(attrelid=oid, attname=column, atttypid=oid_type, attstattarget=-1,
                                             attlen=pgtypes.SIZES.get(oid_type, -1), attnum=number, attndims=0,
                                             attcacheoff=-1, atttypmod=typmod, attbyval=False, attalign="i",
                                             attstorage="p", attnotnull=not_null, atthasdef=False,
                                             atthasmissing=False, attidentity="", attgenerated="",
                                             attisdropped=False, attislocal=True, attinhcount=0,
                                             attcollation=0))  # fmt: skip
            if comment:
                rows["pg_description"].append(dict(objoid=oid, classoid=1259, objsubid=number, description=comment))
            rows["information_schema.columns"].append(dict(
                table_catalog=db_name, table_schema=schema, table_name=name, column_name=column,
                ordinal_position=number, is_nullable="NO" if not_null else "YES",
                data_type=pgtypes.display_name(oid_type), udt_catalog=db_name, udt_schema="pg_catalog",
                numeric_precision=((typmod - 4) >> 16) if oid_type == pgtypes.NUMERIC and typmod >= 4 else None,
                numeric_precision_radix=10 if oid_type == pgtypes.NUMERIC and typmod >= 4 else None,
                numeric_scale=((typmod - 4) & 0xFFFF) if oid_type == pgtypes.NUMERIC and typmod >= 4 else None,
                character_maximum_length=typmod - 4 if oid_type == pgtypes.VARCHAR and typmod >= 4 else None,
                udt_name=pgtypes.TYPE_NAMES.get(oid_type, "text"), dtd_identifier=str(number), is_self_referencing="NO",
                is_identity="NO", is_generated="NEVER", is_updatable="NO"))  # fmt: skip
        if key:
            conname = f"{name}_pkey"
            numbers = [i for i, (c, *_) in enumerate(columns, start=1) if c.lower() in key]
            rows["pg_constraint"].append(dict(oid=oid + 500_000, conname=conname, connamespace=schema_oid, contype="p",
                                              condeferrable=False, condeferred=False, convalidated=False,
                                              conrelid=oid, contypid=0, conindid=0, conparentid=0, confrelid=0,
                                              conislocal=True, coninhcount=0, connoinherit=True,
                                              conkey="{" + ",".join(map(str, numbers)) + "}"))  # fmt: skip
            rows["information_schema.table_constraints"].append(dict(
                constraint_catalog=db_name, constraint_schema=schema, constraint_name=conname, table_catalog=db_name,
                table_schema=schema, table_name=name, constraint_type="PRIMARY KEY", is_deferrable="NO",
                initially_deferred="NO", enforced="NO"))  # fmt: skip
            for position, column in enumerate(definition.primary_key, start=1):
                rows["information_schema.key_column_usage"].append(dict(
                    constraint_catalog=db_name, constraint_schema=schema, constraint_name=conname,
                    table_catalog=db_name, table_schema=schema, table_name=name, column_name=column,
                    ordinal_position=position))  # fmt: skip
    for word in ("select", "from", "where", "table", "create", "insert", "into", "values", "watermark", "window"):
        rows["pg_get_keywords"].append(dict(word=word, catcode="R", barelabel=True, catdesc="reserved", baredesc="can be bare label"))
    for table, entries in rows.items():
        qualified = table if "." in table else f"pg_catalog.{table}"
        bare = table.split(".")[-1]
        columns = [c for c, _ in _columns(TABLES.get(bare) if "." not in table else INFORMATION[bare])]
        if entries:
            db.executemany(f"INSERT INTO {qualified} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                           [tuple(_stored(e.get(c)) for c in columns) for e in entries])


def _stored(value: Any) -> Any:
    return int(value) if isinstance(value, bool) else value


def _category(oid: int) -> str:
    if oid in (pgtypes.INT2, pgtypes.INT4, pgtypes.INT8, pgtypes.FLOAT4, pgtypes.FLOAT8, pgtypes.NUMERIC, pgtypes.OID):
        return "N"
    return {pgtypes.BOOL: "B", pgtypes.DATE: "D", pgtypes.TIMESTAMP: "D", pgtypes.TIMESTAMPTZ: "D"}.get(oid, "S")


def _relation_columns(definition: Any) -> list[tuple[str, str | None, bool, str | None]]:
    if isinstance(definition, ViewDef):
        return [(c, "STRING", True, None) for c in definition.columns or []]
    out = []
    for column in definition.columns:
        type_text = column.data_type
        if type_text is None:  # a computed column: its type comes from its expression
            type_text = "TIMESTAMP_LTZ" if column.is_processing_time else "STRING"
        out.append((column.name, type_text, column.nullable, column.comment))
    return out


def _schema(db: sqlite3.Connection) -> None:
    db.execute("ATTACH DATABASE ':memory:' AS pg_catalog")
    db.execute("ATTACH DATABASE ':memory:' AS information_schema")
    for schema, tables in (("pg_catalog", TABLES), ("information_schema", INFORMATION)):
        for table, spec in tables.items():
            columns = ", ".join(f'"{name}" {"INTEGER" if kind in "ib" else "TEXT"}' for name, kind in _columns(spec))
            db.execute(f"CREATE TABLE {schema}.{table} ({columns})")


# functions -------------------------------------------------------------------------------------------------------


def _functions(db: sqlite3.Connection, snap: Snapshot) -> None:
    relations = {name.lower(): oid for oid, _, name, _ in snap.relations}
    schema_of = {oid: schema_oid for oid, schema_oid, _, _ in snap.relations}
    current_schema = snap.schema_oid(snap.current)
    by_name = {name: oid for oid, name in pgtypes.TYPE_NAMES.items()}
    catalogs = {"pg_class": 1259, "pg_namespace": 2615, "pg_type": 1247, "pg_attribute": 1249, "pg_proc": 1255,
                "pg_constraint": 2606, "pg_database": 1262, "pg_description": 2609, "pg_index": 2610}  # fmt: skip

    def regclass(value: Any) -> Any:
        if value is None or isinstance(value, int):
            return value
        text = str(value).strip().strip('"').split(".")[-1].strip('"').lower()
        if text.isdigit():
            return int(text)
        return catalogs.get(text) or relations.get(text) or 0

    def regtype(value: Any) -> Any:
        if value is None or isinstance(value, int):
            return value
        return by_name.get(str(value).lower(), 0)

    def setting(name: Any, *_: Any) -> Any:
        return snap.pg.get(str(name)) if name is not None else None

    def array_text(value: Any) -> list[str]:
        if value is None:
            return []
        text = str(value).strip()
        if text.startswith("{") and text.endswith("}"):
            return [v.strip().strip('"') for v in text[1:-1].split(",") if v.strip()]
        return [text]

    def quote_ident(name: Any) -> Any:
        if name is None:
            return None
        text = str(name)
        return text if re.fullmatch(r"[a-z_][a-z0-9_$]*", text) else '"' + text.replace('"', '""') + '"'

    functions = {
        "regexp": (2, lambda pattern, value: None if value is None or pattern is None else int(re.search(str(pattern), str(value)) is not None)),
        "regexp_i": (2, lambda pattern, value: None if value is None or pattern is None else int(re.search(str(pattern), str(value), re.I) is not None)),
        "regclass": (1, regclass), "regtype": (1, regtype), "regnamespace": (1, lambda v: snap.schema_oid(str(v)) if isinstance(v, str) else v),
        "regproc": (1, lambda v: 0 if isinstance(v, str) else v), "regrole": (1, lambda v: OWNER if isinstance(v, str) else v),
        "pg_table_is_visible": (1, lambda oid: int(schema_of.get(oid, current_schema) == current_schema)),
        "pg_type_is_visible": (1, lambda oid: 1), "pg_function_is_visible": (1, lambda oid: 1),
        "pg_get_userbyid": (1, lambda oid: snap.user), "pg_encoding_to_char": (1, lambda n: "UTF8"),
        "format_type": (2, lambda oid, mod: None if oid is None else pgtypes.display_name(int(oid), -1 if mod is None else int(mod))),
        "pg_get_expr": (-1, lambda *a: None), "pg_get_constraintdef": (-1, lambda *a: None),
        "pg_get_indexdef": (-1, lambda *a: None), "pg_get_viewdef": (-1, lambda *a: None),
        "pg_get_partkeydef": (-1, lambda *a: None), "pg_get_triggerdef": (-1, lambda *a: None),
        "pg_get_function_result": (-1, lambda *a: None), "pg_get_function_arguments": (-1, lambda *a: None),
        "pg_get_statisticsobjdef_columns": (-1, lambda *a: None), "pg_get_serial_sequence": (-1, lambda *a: None),
        "obj_description": (-1, lambda *a: None), "col_description": (-1, lambda *a: None),
        "shobj_description": (-1, lambda *a: None),
        "version": (0, lambda: f"PostgreSQL {snap.pg.get('server_version')} (streamshell {__version__}, Spark Structured Streaming)"),
        "current_schema": (0, lambda: snap.current), "current_database": (0, lambda: "streamshell"),
        "current_catalog": (0, lambda: "streamshell"),
        "current_user": (0, lambda: snap.user), "session_user": (0, lambda: snap.user), "user": (0, lambda: snap.user),
        "current_role": (0, lambda: snap.user),
        "current_schemas": (1, lambda implicit: "{" + ("pg_catalog," if implicit else "") + snap.current + "}"),
        "current_setting": (-1, setting), "set_config": (3, lambda name, value, local: value),
        "pg_backend_pid": (0, lambda: 0), "txid_current": (0, lambda: 1), "pg_is_in_recovery": (0, lambda: 0),
        "pg_postmaster_start_time": (0, lambda: None), "inet_server_addr": (0, lambda: None),
        "inet_server_port": (0, lambda: None), "pg_size_pretty": (1, lambda n: f"{n or 0} bytes"),
        "pg_total_relation_size": (1, lambda oid: 0), "pg_relation_size": (-1, lambda *a: 0),
        "pg_table_size": (1, lambda oid: 0), "pg_indexes_size": (1, lambda oid: 0),
        "pg_tablespace_location": (1, lambda oid: ""), "pg_has_role": (-1, lambda *a: 1),
        "has_table_privilege": (-1, lambda *a: 1), "has_schema_privilege": (-1, lambda *a: 1),
        "has_database_privilege": (-1, lambda *a: 1), "has_column_privilege": (-1, lambda *a: 1),
        "has_any_column_privilege": (-1, lambda *a: 1), "has_function_privilege": (-1, lambda *a: 1),
        "quote_ident": (1, quote_ident), "array_to_string": (-1, lambda arr, sep, *a: sep.join(array_text(arr)) if arr is not None else None),
        "pg_array": (-1, lambda *values: "{" + ",".join("" if v is None else str(v) for v in values) + "}"),
        "pg_any": (2, lambda value, arr: None if value is None else int(str(value) in array_text(arr))),
        "pg_subscript": (2, lambda arr, i: (array_text(arr)[int(i) - 1] if arr is not None and i is not None
                                             and 1 <= int(i) <= len(array_text(arr)) else None)),
        "array_lower": (2, lambda arr, dim: 1 if array_text(arr) else None),
        "array_upper": (2, lambda arr, dim: len(array_text(arr)) or None),
        "array_length": (2, lambda arr, dim: len(array_text(arr)) or None),
        "cardinality": (1, lambda arr: len(array_text(arr))),
        "string_to_array": (2, lambda text, sep: None if text is None else "{" + ",".join(str(text).split(sep)) + "}"),
        "pg_trim": (1, lambda t: None if t is None else str(t).strip()),
        "now": (0, lambda: datetime.now(timezone.utc).replace(tzinfo=None).isoformat(" ")),
        "pg_relation_is_publishable": (1, lambda oid: 0),
        "pg_array_json": (1, lambda arr: json.dumps(array_text(arr))),
        "pg_stat_get_numscans": (1, lambda oid: 0),
        "to_regclass": (1, lambda name: regclass(name) or None),
    }
    for name, (count, function) in functions.items():
        db.create_function(name, count, function, deterministic=False)
    db.create_aggregate("pg_array_agg", 1, ArrayAgg)


class ArrayAgg:
    """array_agg as SQLite's aggregate: values in PostgreSQL's array text, `{a,b}`."""

    def __init__(self) -> None:
        self.values: list[str] = []

    def step(self, value: Any) -> None:
        self.values.append("" if value is None else str(value))

    def finalize(self) -> str:
        return "{" + ",".join(self.values) + "}"


# the query -------------------------------------------------------------------------------------------------------

OPERATOR = re.compile(r"OPERATOR\s*\(\s*pg_catalog\s*\.\s*([~!=<>*]+)\s*\)", re.I)
COLLATE = re.compile(r"\s+COLLATE\s+(pg_catalog\s*\.\s*)?(\"?default\"?|\"C\"|C)\b", re.I)
ARRAY_CASTS = re.compile(r"::\s*(pg_catalog\.)?\w+\s*\[\]", re.I)
REG_TYPES = {"regclass", "regtype", "regproc", "regprocedure", "regnamespace", "regrole", "regoper"}
TEXT_TYPES = {"text", "name", "varchar", "char", "bpchar", "character varying", "character", "unknown"}
INT_TYPES = {"oid", "int", "int2", "int4", "int8", "integer", "smallint", "bigint", "xid", "cid", "tid"}


def _rewrite(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.Dot) and isinstance(node.this, (exp.Column, exp.Var, exp.Identifier)) and \
            node.this.name.lower() == "pg_catalog" and isinstance(node.expression, exp.Func):
        return node.expression
    if isinstance(node, exp.Cast):
        target = node.to.sql("postgres").lower().replace("pg_catalog.", "")
        if target in REG_TYPES:
            return exp.Anonymous(this=target.replace("regprocedure", "regproc").replace("regoper", "regproc"), expressions=[node.this])
        if target.endswith("[]") or target.startswith("array"):
            return node.this
        if target in TEXT_TYPES or target.startswith(("varchar", "char")):
            return exp.Cast(this=node.this, to=exp.DataType.build("text"))
        if target in INT_TYPES:
            return exp.Cast(this=node.this, to=exp.DataType.build("bigint"))
        if target in ("bool", "boolean"):
            return node.this
        return node.this
    if isinstance(node, exp.Collate):
        return node.this
    if isinstance(node, exp.RegexpILike):
        return exp.Anonymous(this="regexp_i", expressions=[node.expression, node.this])
    if isinstance(node, exp.RegexpLike):
        return exp.Anonymous(this="regexp", expressions=[node.expression, node.this])
    special = {"CurrentSchema": "current_schema", "CurrentCatalog": "current_database", "CurrentDatabase": "current_database",
               "CurrentUser": "current_user", "SessionUser": "current_user", "CurrentRole": "current_user"}
    if type(node).__name__ in special:
        return exp.Anonymous(this=special[type(node).__name__], expressions=[])
    if isinstance(node, exp.Column) and not node.table and not node.this.quoted and \
            node.name.lower() in ("session_user", "current_user", "user", "current_role"):
        return exp.Anonymous(this="current_user", expressions=[])
    if isinstance(node, exp.Column) and not node.table and not node.this.quoted and node.name.lower() == "current_catalog":
        return exp.Anonymous(this="current_database", expressions=[])
    if isinstance(node, exp.Array):
        query = node.expressions[0] if len(node.expressions) == 1 else None
        query = query.this if isinstance(query, exp.Subquery) else query
        if isinstance(query, exp.Select) and len(query.expressions) == 1:  # ARRAY(SELECT x ...)
            aggregated = query.copy()
            aggregated.set("order", None)
            aggregated.set("expressions", [exp.Anonymous(this="pg_array_agg", expressions=[query.expressions[0].unalias()])])
            return exp.Subquery(this=aggregated)
        return exp.Anonymous(this="pg_array", expressions=list(node.expressions))
    if isinstance(node, exp.ArrayToString):
        return exp.Anonymous(this="array_to_string", expressions=[node.this, node.expression])
    if isinstance(node, exp.Bracket) and len(node.expressions) == 1:
        return exp.Anonymous(this="pg_subscript", expressions=[node.this, node.expressions[0]])
    if isinstance(node, (exp.EQ, exp.NEQ)) and isinstance(node.expression, (exp.Any, exp.All, exp.Anonymous)):
        inner = node.expression
        if isinstance(inner, exp.Anonymous) and inner.name.upper() not in ("ANY", "ALL"):
            return node
        values = inner.this if not isinstance(inner, exp.Anonymous) else inner.expressions[0]
        if isinstance(values, exp.Paren):
            values = values.this
        if isinstance(values, (exp.Subquery, exp.Select)):
            member = exp.In(this=node.this, query=values if isinstance(values, exp.Subquery) else exp.Subquery(this=values))
        else:
            member = exp.EQ(this=exp.Anonymous(this="pg_any", expressions=[node.this, values]), expression=exp.Literal.number(1))
        return member if isinstance(node, exp.EQ) else exp.Not(this=member)
    if isinstance(node, exp.Trim) and not node.args.get("expression"):
        return exp.Anonymous(this="pg_trim", expressions=[node.this])
    if isinstance(node, exp.ByteString):  # E'\n': an escape string
        return exp.Literal.string(node.this.encode("latin-1", "backslashreplace").decode("unicode_escape"))
    if isinstance(node, exp.Unnest) and len(node.expressions) == 1:  # FROM unnest(array) x
        return _unnest(node.expressions[0], node.args.get("alias"))
    if isinstance(node, exp.Table) and isinstance(node.this, exp.Func):  # a function in FROM
        return _from_function(node)
    if isinstance(node, exp.Anonymous) and node.name.lower() in ("current_schemas",):
        return node
    return node


def _alias_names(alias: exp.TableAlias | None, default: str) -> tuple[str, str]:
    """(the relation's alias, its one column's name): `f(...) AS s(r)` is ('s', 'r'), `f(...) s` is ('s', 's')."""
    name = alias.name if alias is not None and alias.name else default
    column = alias.columns[0].name if alias is not None and alias.columns else name
    return name, column


def _derived(sql: str, alias: str) -> exp.Subquery:
    query = sqlglot.parse_one(sql, read="sqlite")
    return exp.Subquery(this=query.this if isinstance(query, exp.Subquery) else query,
                        alias=exp.TableAlias(this=exp.to_identifier(alias)))


def _unnest(array: exp.Expression, alias: exp.TableAlias | None) -> exp.Subquery:
    name, column = _alias_names(alias, "unnest")
    derived = _derived(f'SELECT value AS "{column}" FROM json_each(pg_array_json(__array__))', name)
    next(c for c in derived.find_all(exp.Column) if c.name == "__array__").replace(array)
    return derived


def _from_function(node: exp.Table) -> exp.Expression:
    """A function in FROM: a catalog function that is a table here (pg_get_keywords()), a series, an unnested
    array, or any other function's value as a one-row relation (Grafana's `string_to_array(...) s`)."""
    function, alias = node.this, node.args.get("alias")
    if isinstance(function, (exp.GenerateSeries, exp.ExplodingGenerateSeries)):
        name, column = _alias_names(alias, "generate_series")
        start, end = function.args.get("start"), function.args.get("end")
        return _derived(
            f"WITH RECURSIVE series(v) AS (SELECT CAST(({start.sql('sqlite')}) AS INTEGER) UNION ALL SELECT v + 1 "
            f"FROM series WHERE v < ({end.sql('sqlite')}) AND v < 100000) SELECT v AS \"{column}\" FROM series", name)
    if isinstance(function, (exp.Explode, exp.Unnest)):
        return _unnest(function.this if isinstance(function, exp.Explode) else function.expressions[0], alias)
    called = function.name.lower() if isinstance(function, exp.Anonymous) else function.sql_name().lower()
    if called in TABLES:
        return exp.Table(this=exp.to_identifier(called), db=exp.to_identifier("pg_catalog"), alias=alias)
    name, column = _alias_names(alias, called)
    derived = _derived(f'SELECT 1 AS "{column}"', name)
    derived.this.expressions[0].set("this", function)
    return derived


def translate(sql: str) -> tuple[str, list[exp.Expression]]:
    """The query as SQLite runs it, and its select expressions (to tell boolean columns)."""
    text = OPERATOR.sub(lambda m: " " + m.group(1) + " ", sql)
    text = COLLATE.sub("", text)
    text = ARRAY_CASTS.sub("", text)
    try:
        statements = [s for s in sqlglot.parse(text, read="postgres") if s is not None]
    except sqlglot.errors.SqlglotError as exc:
        raise CatalogQueryError(f"cannot read this catalog query: {str(exc).splitlines()[0]}") from None
    if len(statements) != 1:
        raise CatalogQueryError("one catalog query at a time, please")
    tree = statements[0]
    names = [_pg_name(e) for e in tree.selects] if isinstance(tree, exp.Select) else []
    for node in reversed(list(tree.dfs())):  # children before their parents: a cast inside a cast is seen
        new = _rewrite(node)
        if new is not node:
            if node is tree:
                tree = new
            else:
                node.replace(new)
    selects = tree.selects if isinstance(tree, exp.Query) else []
    if isinstance(tree, exp.Select) and len(names) == len(selects):
        for i, (selected, name) in enumerate(zip(selects, names)):
            if name is not None:
                selects[i] = selected.replace(exp.alias_(selected.copy(), name, quoted=True))
    return tree.sql(dialect="sqlite"), selects


def _pg_name(expression: exp.Expression) -> str | None:
    """The name PostgreSQL gives an unnamed result column (None: it is named or a column): a function's name,
    `case`, or `?column?`."""
    if isinstance(expression, exp.Column) and not expression.table and expression.name.lower() in (
            "session_user", "current_user", "user", "current_role", "current_catalog"):
        return expression.name.lower()
    if isinstance(expression, (exp.Alias, exp.Column, exp.Star)):
        return None
    if isinstance(expression, exp.Dot) and isinstance(expression.expression, exp.Func):
        expression = expression.expression
    if isinstance(expression, exp.Cast):
        return _pg_name(expression.this) or (expression.this.name if isinstance(expression.this, exp.Column) else "?column?")
    if isinstance(expression, exp.Case):
        return "case"
    if isinstance(expression, exp.Anonymous):
        return expression.name.lower()
    if isinstance(expression, exp.Func):
        return expression.sql_name().lower() if not isinstance(expression, exp.CurrentSchema) else "current_schema"
    return "?column?"


def _is_bool(expression: exp.Expression | None, name: str) -> bool:
    if expression is None or isinstance(expression, exp.Star) or (isinstance(expression, exp.Column) and isinstance(expression.this, exp.Star)):
        return name in BOOL_COLUMNS
    inner = expression.this if isinstance(expression, exp.Alias) else expression
    if isinstance(inner, exp.Column):
        return inner.name in BOOL_COLUMNS
    if isinstance(inner, (exp.Predicate, exp.Not, exp.And, exp.Or, exp.Boolean, exp.Exists)):
        return True
    return isinstance(inner, exp.Anonymous) and inner.name.lower() in BOOL_FUNCTIONS | {"pg_any", "regexp", "regexp_i"}


def answer(sql: str, session: Any, pg: Any, user: str) -> Outcome:
    """The catalog query's rows, from a SQLite database made now from the session's catalog."""
    from shell.gateway.connection import StatementFailed
    from shell.gateway import sqlstate

    try:
        translated, selects = translate(sql)
        db = sqlite3.connect(":memory:", check_same_thread=False)
        try:
            _schema(db)
            snap = Snapshot(session, pg, user)
            _fill(db, snap)
            _functions(db, snap)
            cursor = db.execute(translated)
            names = [d[0] for d in cursor.description or []]
            rows = cursor.fetchall()
        finally:
            db.close()
    except (CatalogQueryError, sqlite3.Error) as exc:
        log.warning("catalog query not answered (%s): %s", exc, redact(sql))
        raise StatementFailed(sqlstate.plain_error(
            sqlstate.FEATURE_NOT_SUPPORTED, f"this catalog query is not answered by the gateway: {exc}",
            hint="the gateway answers the pg_catalog and information_schema queries of psql, DBeaver, Grafana and "
                 "JDBC (docs/gateway.md); SHOW TABLES and DESCRIBE t work too")) from None
    if not names:
        return Outcome(None, tag=lambda n: "SELECT 0")
    expanded = selects if len(selects) == len(names) else [None] * len(names)
    booleans = [_is_bool(e, n) for e, n in zip(expanded, names)]
    rows = [tuple(bool(v) if b and v is not None else v for v, b in zip(row, booleans)) for row in rows]
    oids = [pgtypes.BOOL if b else pgtypes.oid_of_values([r[i] for r in rows]) for i, b in enumerate(booleans)]
    return Outcome([describe(n, o) for n, o in zip(names, oids)], iter(rows))
