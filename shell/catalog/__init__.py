"""Table and view definitions: the model, DDL in and out, and where they are kept between sessions."""
