# fusegate: the gate service (`fusegate serve`, the default) and the runner commands (`fusegate run`, `upload`,
# asv) in one image. Build from a Debian bookworm base: deploy/base-image.sh makes one from Debian's archive
# where no registry is reachable (podman build --build-arg BASE=localhost/debian-bookworm:base .); elsewhere the
# default below is Debian's official image.
ARG BASE=docker.io/library/debian:bookworm-slim

FROM ${BASE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml README.md ./
COPY gate gate
COPY kernels kernels
# A TLS-intercepting proxy's CA, when the build needs one to reach the package index, comes in as a build secret
# (podman build --secret id=pip_cert,src=/etc/ssl/certs/ca-certificates.crt): used here, never stored in a layer.
RUN --mount=type=secret,id=pip_cert \
    if [ -s /run/secrets/pip_cert ]; then export PIP_CERT=/run/secrets/pip_cert; fi \
 && python3 -m venv /opt/fusegate \
 && /opt/fusegate/bin/pip install --no-cache-dir --disable-pip-version-check . \
 && /opt/fusegate/bin/python -m compileall -q /opt/fusegate

FROM ${BASE}
# valgrind: the cost signal's instrument; git: the policy is read from the base commit of the gated repository.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 valgrind git ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && git config --system --add safe.directory '*' \
 && useradd --create-home --uid 10001 --shell /usr/sbin/nologin fusegate \
 && mkdir -p /var/cache/fusegate /var/lib/fusegate \
 && chown fusegate:fusegate /var/cache/fusegate /var/lib/fusegate
COPY --from=build /opt/fusegate /opt/fusegate
ENV PATH=/opt/fusegate/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    NUMBA_CACHE_DIR=/var/cache/fusegate/numba \
    FUSEGATE_DATABASE_URL=sqlite:////var/lib/fusegate/fusegate.db \
    FUSEGATE_REPO=/repo
USER 10001
WORKDIR /var/lib/fusegate
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
  CMD ["python3", "-c", "import urllib.request as u; u.urlopen('http://127.0.0.1:8000/api/health', timeout=4)"]
CMD ["fusegate", "serve", "--create", "--host", "0.0.0.0", "--port", "8000"]
