package jaxsample

import (
	"regexp"

	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/plugins/jax"
)

// jax_check.py: process 0 serves the coordinator; the others print once the
// coordinator has answered every registration.
var (
	jaxServes = regexp.MustCompile(`^process 0 of \d+: coordinator serves `)
	jaxJoined = regexp.MustCompile(`^process \d+ of \d+: (?:coordinator serves |OK, registered with the coordinator at )`)
)

// trainingExamples is the JAX contract check (Debian packages no JAX).
var trainingExamples = []training.Example{{
	Framework: jax.Name, What: "JAX contract check: 3 processes register with process 0's coordinator", Contract: true,
	File: "example/jax/jax-contract.yaml", ConfigMap: "jax-check",
	Programs: []string{"example/jax/jax_check.py"}, Container: "jax",
	Judge: judgeJAX, Joined: training.Joined{Line: jaxJoined}, Listening: jaxServes,
}}

// hellos is example/jax/jax.yaml: every process registers with process 0's
// coordinator.
var hellos = []training.Hello{{
	Source: "example/jax/jax.yaml", Name: "jax-dist", Container: "jax",
	Success: regexp.MustCompile(`(?m)^process [0-2] of 3: OK, (all 3 processes registered at|registered with the coordinator at) jax-dist-worker-0\.jax-dist` + training.Qualified + `:6666$`), Tasks: []string{"worker"}, PerPod: 1,
}}
