# syntax=docker/dockerfile:1
# node-tuning-advisor: the agent (DaemonSet) and the CLI, bundled into one file on a slim Node 24.
# Build: docker build -t node-tuning-advisor:0.1.0 .   (or podman: npm run image:build)
# Behind a TLS-intercepting proxy, give npm its CA bundle as the build secret npm-ca:
#   docker build --secret id=npm-ca,src=/etc/ssl/certs/ca-certificates.crt -t node-tuning-advisor:0.1.0 .
# The Node version is the one the `node` devDependency pins for development and tests
# (test/image/dockerfile.test.ts keeps them equal).
ARG NODE_VERSION=24.21.0

# The build stage runs on the builder's own platform: the bundle is plain JavaScript, so a
# multi-platform build (linux/amd64,linux/arm64) bundles once, natively, and only the runtime stage is
# per platform.
FROM --platform=$BUILDPLATFORM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
# .npmrc: omit=peer (a devDependency's 190 MB of peer dependencies are not needed).
# --ignore-scripts: bundling needs no install script (esbuild's binary is its platform package; the
# `node` devDependency's script would only fetch a second Node).
COPY package.json package-lock.json .npmrc ./
RUN --mount=type=secret,id=npm-ca \
    if [ -s /run/secrets/npm-ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm-ca; fi; \
    npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json ./
COPY bin ./bin
COPY src ./src
COPY rules ./rules
COPY scripts ./scripts
RUN npm run -s build && node dist/bundle/node-tuning-advisor.mjs --version

# Runtime: Debian slim with Node 24, no npm packages, no build tools.
# Host tools the agent executes inside the image: none on the host's behalf. Host commands
# (tuned-adm, journalctl, ionice, kubelet --version) run only with --host-root / (src/host/exec.ts),
# never against the mounted host under /host, so none is installed. The one tool the image uses is
# fallocate(1) from util-linux (already part of the base, an essential Debian package): the etcd
# fsync probe preallocates its test file with it, as fio and etcd's WAL do.
FROM node:${NODE_VERSION}-bookworm-slim
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="node-tuning-advisor" \
      org.opencontainers.image.description="Per-node advisor for Kubernetes pod start-up latency: findings with evidence and the fix, as node annotations, Events and Prometheus metrics." \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="node:24-bookworm-slim"
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/rules ./rules
COPY --from=build /src/dist/bundle ./dist/bundle
# nobody:nogroup. The DaemonSet may run the agent as UID 0 without capabilities to read
# root-only host files (manifests/daemonset/daemonset.yaml says why); the CLI needs neither.
USER 65534:65534
# --lite-mode (V8 without its optimizing compilers and WebAssembly; a command-line flag, Node
# refuses it in NODE_OPTIONS): the agent's resident set ~71 MiB instead of ~98 MiB, for about twice
# the CPU per scan (bench/v8-flags.ts); the CLI peaks 10-20 MiB lower and starts as fast. The bundle
# needs no WebAssembly (scripts/bundle.ts).
ENTRYPOINT ["node", "--lite-mode", "/app/dist/bundle/node-tuning-advisor.mjs"]
CMD ["--help"]
