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
# Runner pods, watched; a busy runner's pod is labelled (patch).
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch, create, delete, patch]
# Secrets are never listed nor watched (either returns every Secret's data).
# Each Runner's JIT configuration Secret is created by its actor and read
# back by name; the garbage collector deletes it with its Runner. The
# credentials Secrets named by RunnerSets are read by name, and hold their
# RunnerSet's finalizer while GitHub holds its runners (patch).
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, create, patch]
# Each RunnerSet's ServiceAccount for its runner pods and the
# PodDisruptionBudget over its busy runners (server-side apply: patch, and
# create for the first apply).
- apiGroups: [""]
  resources: [serviceaccounts]
  verbs: [create, patch, delete]
- apiGroups: [policy]
  resources: [poddisruptionbudgets]
  verbs: [create, patch, delete]
# The CA bundle a RunnerSet's pods mount (spec.caBundle) is checked.
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get]
# The Role and RoleBinding of containerMode kubernetes: created for the
# runner pods' ServiceAccount, deleted when no longer needed.
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles, rolebindings]
  verbs: [create, patch, delete]
{{- if .Values.rbac.containerModeKubernetes }}
# What that Role grants, which the manager must hold to grant it (Kubernetes
# refuses to let anyone grant rights it does not have).
- apiGroups: [""]
  resources: [pods/exec]
  verbs: [get, create]
- apiGroups: [""]
  resources: [pods/log]
  verbs: [get, list, watch]
- apiGroups: [batch]
  resources: [jobs]
  verbs: [get, list, create, delete]
- apiGroups: [""]
  resources: [secrets]
  verbs: [list, delete]
{{- end }}
# Events on Runner phase transitions and RunnerSet changes (series updates are patches).
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
# Each namespace of --namespaces is looked up once on taking the lead: one
# that does not exist is logged by name (a Role allows its own namespace).
- apiGroups: [""]
  resources: [namespaces]
  verbs: [get]
{{- end }}
