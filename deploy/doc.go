// Package deploy holds no code: its tests check the deployment files
// (Dockerfile, docker-compose.yml, deploy/kubernetes) against the daemon's
// configuration and against each other, without a container engine.
package deploy
