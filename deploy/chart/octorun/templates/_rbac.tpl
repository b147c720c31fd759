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
# RunnerSet's finalizer while GitHub holds its runners (patch). Cluster-wide,
# the reads come from the manager's reads binding in each namespace of an
# admitted set (octorun.managerReadsRole), never from this ClusterRole.
- apiGroups: [""]
  resources: [secrets]
  verbs: [{{ if .Values.rbac.namespaced }}get, {{ end }}create, patch]
# Each RunnerSet's ServiceAccount for its runner pods and the
# PodDisruptionBudget over its busy runners (server-side apply: patch, and
# create for the first apply).
- apiGroups: [""]
  resources: [serviceaccounts]
  verbs: [create, patch, delete]
- apiGroups: [policy]
  resources: [poddisruptionbudgets]
  verbs: [create, patch, delete]
# Warm nodes (docs/scaling.md): per variant with a start-time target, a
# PodTemplate shaped like its runner pod and the node autoscalers'
# CapacityBuffer asking for chunks of it (server-side apply: patch, and
# create for the first apply). Neither is read back.
- apiGroups: [""]
  resources: [podtemplates]
  verbs: [create, patch, delete]
- apiGroups: [autoscaling.x-k8s.io]
  resources: [capacitybuffers]
  verbs: [create, patch, delete]
{{- if .Values.rbac.namespaced }}
# The CA bundle a RunnerSet's pods mount (spec.caBundle) is checked.
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get]
{{- else }}
# Its reads in a tenant namespace: a RoleBinding of this one ClusterRole
# (get on Secrets and ConfigMaps) to its own ServiceAccount, made by each
# RunnerSet a class admits there before anything is read; the write policy
# lets it name no other subject and make it only in tenant namespaces.
- apiGroups: [rbac.authorization.k8s.io]
  resources: [clusterroles]
  verbs: [bind]
  resourceNames: [{{ include "octorun.managerReadsRole" . }}]
{{- end }}
# The RoleBinding of containerMode kubernetes: the runner pods'
# ServiceAccount bound to the hooks' ClusterRole, deleted when no longer
# needed (and the one a manager before issue 32 made, to a Role of its own).
# No Roles: the manager writes none.
- apiGroups: [rbac.authorization.k8s.io]
  resources: [rolebindings]
  verbs: [create, patch, delete]
{{- if .Values.rbac.containerModeKubernetes }}
# Binding that one ClusterRole and no other: the manager holds none of its
# rights (no pods/exec), and `bind` lets it grant them anyway.
- apiGroups: [rbac.authorization.k8s.io]
  resources: [clusterroles]
  verbs: [bind]
  resourceNames: [{{ include "octorun.runnerKubernetesModeRole" . }}]
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

{{/* The ClusterRole of the manager's reads in a tenant namespace, bound there by its RunnerSets. */}}
{{- define "octorun.managerReadsRole" -}}
{{ include "octorun.manager" . }}-reads
{{- end }}

{{/* The ClusterRole a containerMode kubernetes RunnerSet's runner pods are bound to. */}}
{{- define "octorun.runnerKubernetesModeRole" -}}
{{ include "octorun.fullname" . }}-runner-kubernetes-mode
{{- end }}
