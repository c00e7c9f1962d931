// Package deploy checks the deployment files of Earshot: the Kubernetes
// manifests in kubernetes/, decoded strictly into the Kubernetes API types
// (and the Prometheus Operator's), the Grafana dashboard, decoded strictly
// with Grafana's foundation SDK, and the compose stack in compose.yaml,
// loaded as Docker Compose loads it. It is a module of its own so that the
// service's module never depends on Kubernetes or Compose libraries. It
// holds no code the service uses; go test ./... runs the checks.
package deploy
