# syntax=docker/dockerfile:1
#
# ssatd: a static binary on distroless (CA certificates included, no shell,
# runs as the unprivileged "nonroot" user, uid 65532).
#
#   docker build -t ssatd --build-arg VERSION=$(git describe --always --dirty) \
#     --build-arg COMMIT=$(git rev-parse HEAD) --build-arg DATE=$(git log -1 --format=%cI) .
#   docker run --rm -p 8080:8080 -v "$PWD/configs/production.example.toml:/etc/ssatd/ssatd.toml:ro" ssatd

FROM golang:1.26 AS build
WORKDIR /src
# Dependencies first, so that code changes reuse the cached module layer.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The build context has no .git (see .dockerignore), so the commit and its
# date come as build arguments; `ssatd version` says "unknown" without them.
ARG VERSION=dev
ARG COMMIT=
ARG DATE=
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT} -X main.date=${DATE}" \
      -o /out/ssatd ./cmd/ssatd

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ssatd /usr/local/bin/ssatd
COPY configs/ /etc/ssatd/examples/
# serve reads the configuration file named here when -config is not given;
# mount yours at this path (or set SSATD_CONFIG).
ENV SSATD_CONFIG=/etc/ssatd/ssatd.toml
USER nonroot:nonroot
# 8080: clients (server.listen). 9090: admin /healthz, /readyz, /metrics
# (server.admin_listen; loopback by default, which the health check below uses).
EXPOSE 8080 9090
HEALTHCHECK --interval=10s --timeout=5s --start-period=5s --retries=3 \
  CMD ["/usr/local/bin/ssatd", "healthcheck", "-url", "http://127.0.0.1:9090/healthz"]
ENTRYPOINT ["/usr/local/bin/ssatd"]
CMD ["serve"]
