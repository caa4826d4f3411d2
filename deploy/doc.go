// Package deploy holds no code: its tests check the deployment files
// (Dockerfile, docker-compose.yml, deploy/kubernetes) against the daemon's
// configuration and against each other, without a container engine.
//
// It is a Go module of its own (deploy/go.mod, with ssatd replaced by the
// checkout it sits in), so that the Kubernetes, kustomize and Compose
// libraries its tests read those files with are no dependency of ssatd's
// module or of ssatdtest's users. Run its tests from here:
// (cd deploy && go test ./...).
package deploy
