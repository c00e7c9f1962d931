# syntax=docker/dockerfile:1
# Earshot: a static, non-root image. Build: docker build -t earshot .
# Run:   docker run -p 8080:8080 -v earshot-data:/data earshot

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/earshot ./cmd/earshot \
 && mkdir -p -m 0700 /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/earshot /earshot
COPY --from=build --chown=65532:65532 /out/data /data
ENV EARSHOT_DATA_DIR=/data \
    EARSHOT_ADDR=:8080
USER 65532:65532
VOLUME /data
EXPOSE 8080 9090
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 CMD ["/earshot", "health", "--url", "http://127.0.0.1:8080/alive"]
ENTRYPOINT ["/earshot"]
CMD ["serve"]
