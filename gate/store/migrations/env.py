"""alembic environment: the URL comes from the Config that ``gate.store.db.upgrade`` builds."""

from alembic import context

from gate.store import db
from gate.store.models import Base

config = context.config


def run_migrations_online() -> None:
    with db.engine(config.get_main_option("sqlalchemy.url")).connect() as connection:
        # SQLite's batch mode rebuilds a table (copy, DROP, rename): with foreign keys on, dropping a parent table
        # deletes its children through ON DELETE CASCADE (0005 rebuilt ``evaluation``: every comparison went).
        # The pragma is set outside a transaction, on the driver's connection, and checked and restored after.
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:
            connection.connection.dbapi_connection.execute("PRAGMA foreign_keys=OFF")
        try:
            context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
            with context.begin_transaction():
                context.run_migrations()
                if sqlite:
                    broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                    if broken:
                        raise RuntimeError(f"the migration left rows without their parent: {broken[:5]}")
            connection.commit()
        finally:
            if sqlite:
                connection.connection.dbapi_connection.execute("PRAGMA foreign_keys=ON")


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"), target_metadata=Base.metadata, literal_binds=True
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
