"""``memtab site``: a static benchmark site built from ``results/``.

The site has four pages, plain HTML, CSS and JavaScript written for it (no library, no
CDN, no build step), and the data they show, written beside them as JSON:

- ``index.html``: the leaderboard, one sortable table per track (win rates with their
  intervals, normalised scores, the audit status, a link to every result's games);
- ``agent.html?agent=LABEL``: what an agent is (its docstring), its source or training
  config, its results on every track and the evaluation shipped with a trained policy;
- ``study.html``: the memory study's tables and learning curves (SVG drawn by the page
  from the run files' curves), selectable by track, memory model and architecture;
- ``viewer.html?record=FILE&game=I&flip=K``: game ``I`` of a records file replayed flip
  by flip, with the acting player's memory overlay (``static/rules.js`` replays the rules
  of all three games; the tests hold it equal to the Python engines).

Only results that pass the leaderboard's audit (:func:`memtab_env.protocol.leaderboard.collect`:
schema, track, records replayed, figures recomputed) appear; the refused ones are listed
by path and reason, never as entries.

``file://`` and ``http``: Chromium refuses ``fetch()`` of local files from a ``file://``
page, so every data file is written twice, as ``NAME.json`` and as ``NAME.js`` (the same
object assigned to a global) that the pages load with ``<script>``. A records file is
copied into ``records/`` with a sidecar ``FILE.js`` holding its bytes (base64); the
viewer fetches ``FILE`` when the page is served over http(s) (any records file found
relative to the page, ``.jsonl`` or ``.jsonl.gz``, gunzipped by the browser's
``DecompressionStream``) and loads the sidecar from ``file://``. ``docs/site.md``
explains the site.
"""

from __future__ import annotations

from memtab_env.site.build import SiteReport, build_site

__all__ = ["SiteReport", "build_site"]
