# Build the neobot binary, then ship it with Node.js for the npm MCP servers.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/neobot ./cmd/neobot

FROM node:20-bookworm-slim
WORKDIR /app
COPY --from=build /out/neobot /usr/local/bin/neobot
COPY manifests ./manifests
RUN mkdir -p /data /app/workspace
ENTRYPOINT ["neobot"]
