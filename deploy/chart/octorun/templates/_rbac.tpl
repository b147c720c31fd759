{{/* The manager's rights where it watches RunnerSets (a ClusterRole, or a Role per watched namespace). */}}
{{- define "octorun.managerRules" }}
# RunnerSets: watched; finalizer and status written with merge patches.
- apiGroups: [octorun.io]
  resources: [runnersets]
  verbs: [get, list, watch, patch]
- apiGroups: [octorun.io]
  resources: [runnersets/status]
  verbs: [patch]
# Runners: created and deleted by their RunnerSet; finalizer and status patched.
- apiGroups: [octorun.io]
  resources: [runners]
  verbs: [get, list, watch, create, delete, patch]
- apiGroups: [octorun.io]
  resources: [runners/status]
  verbs: [patch]
# Runners, Pods and Secrets carry blockOwnerDeletion owner references.
- apiGroups: [octorun.io]
  resources: [runnersets/finalizers, runners/finalizers]
  verbs: [update]
# Runner pods and their JIT configuration Secrets; the credentials Secrets
# named by RunnerSets are read.
- apiGroups: [""]
  resources: [pods, secrets]
  verbs: [get, list, watch, create, delete]
# An Event on each Runner phase transition (series updates are patches).
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end }}
