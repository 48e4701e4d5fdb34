"""The one list of providers, the protocol each implements, and how the pipeline runs one.

Adding a provider touches one new module and one line in ``vocab.PROVIDER_TABLE`` (its name, its
scraper class as ``module:Class``, its aliases); :data:`PROVIDERS` imports the classes from that table.
A provider's own needs come through optional hooks on its class, never through an ``if name == ...``
in the pipeline: ``state_options(state_dir)`` (options of a live run, such as a file it keeps),
``replay_options`` (what a ``--from-raw`` manifest may set, and of which kind), ``check(client,
settings)`` (``planner providers --check``'s one cheap request) and ``refused_hint`` (what to do when
the provider refuses the credentials).

How ``planner refresh`` calls a provider (each provider in its own thread/transaction)::

    cls = PROVIDERS[name]
    scraper = cls()
    settings = ProviderSettings(
        enabled=..., base_url=..., regions=(...), options={...},   # from config.toml
        credentials=read_credentials(cls, os.environ),              # env only, never config
    )
    if not settings.enabled: ...                                     # a 'skipped' run
    client = make_client(cls, settings, version=planner.__version__,
                         save_raw_dir=args.save_raw, from_raw_dir=args.from_raw)
    result = collect(scraper, client, settings)                      # never raises
    result.status   # RunStatus OK | PARTIAL | FAILED
    result.offers   # list[RawOffer], in the provider's words, to normalise and store
    result.issues   # list[Issue]: region failures (make the run partial) and skipped offers (counted)
    result.error    # readable text for scrape_runs.error when failed/partial; never a secret

``scrape()`` yields :class:`RawOffer` and :class:`Issue` items. A problem confined to one region (or
one zone) is yielded as ``Issue(kind="region_failed")`` and the scraper carries on; an offer it cannot
price honestly (GPU count or model unknown) is ``Issue(kind="skipped")``; ``Issue(kind="warning")``
notes something worth a summary line that leaves the data whole (Aliyun fell back to a remembered
price-file version); ``Issue(kind="note")`` is information only (no AutoDL token, so only the GPU list
was read), printed so that a run with zero offers says why. A problem that spoils the whole run (every region failed, credentials refused, the
price file unreadable) raises :class:`ScrapeError`: ``collect`` turns that into ``status="failed"`` and
drops any offers yielded before it, so a failed run never stores half a catalogue.

``mode(env)`` tells ``planner providers`` what a provider will do with the environment given.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

from scrapers.base import RawOffer, ScrapeError
from scrapers.http import HttpClient, HttpPolicy
from scrapers.recording import scrub_text
from scrapers.types import Issue, ProviderMode, ProviderSettings
from vocab import PROVIDER_TABLE, RunStatus

__all__ = [
    "PROVIDERS",
    "Issue",
    "ProviderMode",
    "ProviderSettings",
    "ScrapeResult",
    "Scraper",
    "collect",
    "make_client",
    "read_credentials",
    "state_options",
]


class Scraper(Protocol):
    """What every provider module implements."""

    name: ClassVar[str]
    credential_env: ClassVar[tuple[str, ...]]  # env vars the caller reads into settings.credentials
    credential_help: ClassVar[str]  # where a user gets those credentials (for ``planner providers``)
    http_policy: ClassVar[HttpPolicy]  # the provider's timeouts and polite rate

    def mode(self, env: Mapping[str, str]) -> ProviderMode:
        """Which mode the provider will use with this environment (looks at presence only)."""
        ...

    def scrape(self, client: HttpClient, settings: ProviderSettings) -> Iterator[RawOffer | Issue]:
        """Fetch and parse; yield offers and issues; raise ScrapeError when the whole run is lost."""
        ...


def _scraper_class(path: str) -> type[Scraper]:
    module, _, name = path.partition(":")
    cls: type[Scraper] = getattr(import_module(module), name)
    return cls


# Each line of vocab.PROVIDER_TABLE names its scraper; here they are imported, in the table's order.
PROVIDERS: dict[str, type[Scraper]] = {p.name: _scraper_class(p.scraper) for p in PROVIDER_TABLE}


def state_options(cls: type[Scraper], state_dir: Path) -> dict[str, Any]:
    """The options a live run adds for ``cls`` (files of its own under the planner's ``state_dir``).

    The hook is the scraper's optional ``state_options(state_dir)``; most providers keep no state.
    """
    hook = getattr(cls, "state_options", None)
    return dict(hook(state_dir)) if hook else {}


@dataclass
class ScrapeResult:
    """One provider run, ready for a ``scrape_runs`` row."""

    provider: str
    status: Literal[RunStatus.OK, RunStatus.PARTIAL, RunStatus.FAILED]
    offers: list[RawOffer] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    error: str | None = None

    @property
    def skipped(self) -> list[Issue]:
        return [i for i in self.issues if i.kind == "skipped"]

    @property
    def notes(self) -> list[Issue]:
        """Warnings and notes: lines for the summary that cost no data."""
        return [i for i in self.issues if i.kind in ("warning", "note")]


def read_credentials(cls: type[Scraper], env: Mapping[str, str]) -> dict[str, str]:
    """The provider's credentials from the environment (only its own variables, only non-empty ones)."""
    return {name: env[name] for name in cls.credential_env if env.get(name)}


def make_client(
    cls: type[Scraper],
    settings: ProviderSettings,
    *,
    version: str,
    save_raw_dir: Path | str | None = None,
    from_raw_dir: Path | str | None = None,
    **overrides: Any,
) -> HttpClient:
    """An :class:`HttpClient` for one provider, wired to its policy, base_url, secrets and raw folders.

    ``overrides`` go to :class:`HttpClient` (``sleep``, ``clock``, ``session``, ``policy``) for tests.
    """
    overrides.setdefault("policy", cls.http_policy)
    return HttpClient(
        cls.name,
        version=version,
        base_url=settings.base_url,
        save_raw_dir=save_raw_dir,
        from_raw_dir=from_raw_dir,
        secrets=tuple(settings.credentials.values()),
        **overrides,
    )


def collect(scraper: Scraper, client: HttpClient, settings: ProviderSettings) -> ScrapeResult:
    """Run one scraper to the end; never raises. Secrets are scrubbed from every message."""
    secrets = tuple(v for v in settings.credentials.values() if v)
    offers: list[RawOffer] = []
    issues: list[Issue] = []
    try:
        for item in scraper.scrape(client, settings):
            if isinstance(item, RawOffer):
                offers.append(item)
            else:
                issues.append(
                    Issue(item.kind, scrub_text(item.message, secrets), item.region, item.instance_type)
                )
    except ScrapeError as exc:
        return ScrapeResult(scraper.name, RunStatus.FAILED, [], issues, scrub_text(str(exc), secrets))
    except Exception as exc:  # a scraper bug must not cost other providers their run
        text = scrub_text(f"unexpected {type(exc).__name__}: {exc}", secrets)
        return ScrapeResult(scraper.name, RunStatus.FAILED, [], issues, text)
    failed = [i for i in issues if i.kind == "region_failed"]
    if failed and not offers:
        return ScrapeResult(scraper.name, RunStatus.FAILED, [], issues, "; ".join(i.message for i in failed))
    if failed:
        return ScrapeResult(
            scraper.name, RunStatus.PARTIAL, offers, issues, "; ".join(i.message for i in failed)
        )
    return ScrapeResult(scraper.name, RunStatus.OK, offers, issues)
