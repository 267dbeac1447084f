"""Table, view and function definitions: the model, names, ALTER and LIKE, and the store that keeps them between
sessions (DDL text in and out is in shell/sql/ddl.py; the session's catalogs of these stores in shell/catalogs/)."""
