"""What every command shares: the settings and the database, opened once and only when needed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from planner.config import Config, language, load_config, with_language

if TYPE_CHECKING:  # SQLAlchemy is imported when a command opens the database, not before
    from sqlalchemy.engine import Engine

    from planner.ingest.snapshot import SnapshotInfo


@dataclass
class App:
    config_file: str | None = None
    db_url: str | None = None
    say: Callable[[str], None] | None = None  # where a line about what was done goes (standard error)
    lang: str | None = None  # --lang: [locale] language for this command
    _engine: Engine | None = field(default=None, repr=False)

    @cached_property
    def config(self) -> Config:
        return with_language(load_config(self.config_file), self.lang)

    @property
    def language(self) -> str:
        """The language people read ("en" or "zh"): ``planner.config.language``."""
        return language(self.config)

    def engine(self) -> Engine:
        """The database, migrated to the current schema (opened once per process)."""
        if self._engine is None:
            from planner.storage import open_database

            self._engine = open_database(self.config, self.db_url, self.say)
        return self._engine

    def reading_engine(self) -> tuple[Engine, SnapshotInfo | None]:
        """The database for a reading command, and the bundled snapshot's details when it was loaded
        first because the database held no prices."""
        from planner.ingest.snapshot import ensure_prices

        engine = self.engine()
        return engine, ensure_prices(engine, self.config)
