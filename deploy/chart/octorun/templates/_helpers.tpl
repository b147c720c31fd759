{{/* Names: every object is "<fullname>" or "<fullname>-<part>". */}}
{{- define "octorun.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "octorun.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The manager's Deployment, Lease and (by default) ServiceAccount. */}}
{{- define "octorun.manager" -}}
{{- printf "%s-manager" (include "octorun.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The admission webhook's Service; its certificate names it. */}}
{{- define "octorun.webhookService" -}}
{{- printf "%s-webhook" (include "octorun.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "octorun.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "octorun.manager" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name: name an existing ServiceAccount when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The Secret holding the GitHub webhook secret, and its key. */}}
{{- define "octorun.githubWebhookSecret" -}}
{{- default (printf "%s-github-webhook" (include "octorun.fullname" .)) .Values.githubWebhook.existingSecret -}}
{{- end -}}

{{- define "octorun.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "octorun.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* The manager's pods; every Service selects them. */}}
{{- define "octorun.selectorLabels" -}}
app.kubernetes.io/name: {{ include "octorun.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: manager
{{- end -}}

{{/* Where the manager looks for RunnerSets: the namespaces that get its rights. */}}
{{- define "octorun.watchNamespaces" -}}
{{- join "," (uniq .Values.watchNamespaces) -}}
{{- end -}}

{{/* The admission webhooks' namespaceSelector. */}}
{{- define "octorun.admissionNamespaceSelector" -}}
{{- if .Values.admission.namespaceSelector -}}
{{- toYaml .Values.admission.namespaceSelector -}}
{{- else if .Values.watchNamespaces -}}
matchExpressions:
- key: kubernetes.io/metadata.name
  operator: In
  values: {{ uniq .Values.watchNamespaces | toJson }}
{{- end -}}
{{- end -}}

{{/*
Combinations of values that cannot work; each message names the values.
(Types, ranges and unknown keys are values.schema.json's.)
*/}}
{{- define "octorun.validate" -}}
{{- $v := .Values -}}
{{- if and $v.pdb.enabled (eq (int $v.replicas) 0) -}}
{{- fail "replicas: 0 with pdb.enabled=true: a PodDisruptionBudget over no pods blocks nothing and reports itself unhealthy; set pdb.enabled=false or replicas >= 1" -}}
{{- end -}}
{{- if $v.pdb.enabled -}}
{{- if and (not (kindIs "invalid" $v.pdb.minAvailable)) (not (kindIs "invalid" $v.pdb.maxUnavailable)) -}}
{{- fail "pdb.minAvailable and pdb.maxUnavailable are both set: a PodDisruptionBudget takes one of them; set the other to null" -}}
{{- end -}}
{{- if and (kindIs "invalid" $v.pdb.minAvailable) (kindIs "invalid" $v.pdb.maxUnavailable) -}}
{{- fail "pdb.enabled=true needs pdb.minAvailable or pdb.maxUnavailable" -}}
{{- end -}}
{{- if and (not (kindIs "invalid" $v.pdb.minAvailable)) (not (kindIs "string" $v.pdb.minAvailable)) -}}
{{- if ge (int $v.pdb.minAvailable) (int $v.replicas) -}}
{{- fail (printf "pdb.minAvailable=%d with replicas=%d: no replica could ever be evicted (node drains would hang); raise replicas, lower pdb.minAvailable, or set pdb.enabled=false" (int $v.pdb.minAvailable) (int $v.replicas)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and (not $v.leaderElection.enabled) (gt (int $v.replicas) 1) -}}
{{- fail (printf "leaderElection.enabled=false with replicas=%d: every replica would reconcile the same RunnerSets; enable leaderElection or set replicas to 1" (int $v.replicas)) -}}
{{- end -}}
{{- if and $v.githubWebhook.enabled (not $v.githubWebhook.existingSecret) (not $v.githubWebhook.secret) -}}
{{- fail "githubWebhook.enabled=true needs the webhook secret: set githubWebhook.existingSecret (a Secret in the release namespace) or githubWebhook.secret" -}}
{{- end -}}
{{- if and $v.githubWebhook.ingress.enabled (not $v.githubWebhook.enabled) -}}
{{- fail "githubWebhook.ingress.enabled=true needs githubWebhook.enabled=true (the Ingress leads to the webhook intake)" -}}
{{- end -}}
{{- if and $v.admission.certManager.enabled (not $v.admission.enabled) -}}
{{- fail "admission.certManager.enabled=true needs admission.enabled=true" -}}
{{- end -}}
{{- if $v.admission.certManager.enabled -}}
{{- if and (not $v.admission.certManager.selfSigned) (not $v.admission.certManager.issuerRef.name) -}}
{{- fail "admission.certManager.enabled=true needs an issuer: set admission.certManager.issuerRef.name (an Issuer or ClusterIssuer) or admission.certManager.selfSigned=true" -}}
{{- end -}}
{{- if and $v.admission.certManager.selfSigned $v.admission.certManager.issuerRef.name -}}
{{- fail "admission.certManager.selfSigned=true and admission.certManager.issuerRef.name are both set: choose one issuer" -}}
{{- end -}}
{{- end -}}
{{- if and $v.rbac.namespaced (not $v.watchNamespaces) -}}
{{- fail "rbac.namespaced=true needs watchNamespaces: without them the manager watches every namespace and needs a ClusterRole" -}}
{{- end -}}
{{- if and $v.extraCABundle.configMapName $v.extraCABundle.secretName -}}
{{- fail "extraCABundle.configMapName and extraCABundle.secretName are both set: the bundle comes from one of them" -}}
{{- end -}}
{{- if and $v.metrics.serviceMonitor.enabled (not $v.metrics.service.enabled) -}}
{{- fail "metrics.serviceMonitor.enabled=true needs metrics.service.enabled=true (the ServiceMonitor selects that Service)" -}}
{{- end -}}
{{- $ports := dict -}}
{{- $named := list (list "metrics.port" $v.metrics.port) (list "probes.port" $v.probes.port) -}}
{{- if $v.admission.enabled -}}{{- $named = append $named (list "admission.port" $v.admission.port) -}}{{- end -}}
{{- if $v.githubWebhook.enabled -}}{{- $named = append $named (list "githubWebhook.port" $v.githubWebhook.port) -}}{{- end -}}
{{- range $named -}}
{{- $key := toString (index . 1) -}}
{{- if hasKey $ports $key -}}
{{- fail (printf "%s and %s are both %s: the manager's ports must differ" (get $ports $key) (index . 0) $key) -}}
{{- end -}}
{{- $_ := set $ports $key (index . 0) -}}
{{- end -}}
{{- end -}}

{{/*
The namespaces the platform admits for tenants' RunnerSets, as a
LabelSelector (docs/runner-classes.md, "Admitting a namespace"): the
watchNamespaces by name when the chart lists them, else
tenantNamespaces.selector. The default RunnerClass admits these, and the
manager's write policy (manager-write-policy.yaml) holds the manager to them.
*/}}
{{- define "octorun.tenantNamespaceSelector" -}}
{{- if .Values.watchNamespaces -}}
{{- dict "matchExpressions" (list (dict "key" "kubernetes.io/metadata.name" "operator" "In" "values" (uniq .Values.watchNamespaces))) | toJson -}}
{{- else -}}
{{- (include "octorun.tenantNamespaces" . | fromJson).selector | default dict | toJson -}}
{{- end -}}
{{- end -}}

{{/*
tenantNamespaces as JSON. `helm upgrade --reuse-values` from a chart before
it brings none: the defaults then (the policy stays on by default). A
selector set to null is gone from the values: every namespace.
*/}}
{{- define "octorun.tenantNamespaces" -}}
{{- .Values.tenantNamespaces | default (dict "selector" (dict "matchLabels" (dict "octorun.io/tenant" "true")) "admissionPolicy" true) | toJson -}}
{{- end -}}

{{/*
A LabelSelector (JSON) as a CEL expression over the map `variables.labels`
(a ValidatingAdmissionPolicy's variable), with the
LabelSelector's meaning: every term must hold; NotIn and DoesNotExist hold
for a missing key; the empty selector selects everything. Keys and values
are label syntax (values.schema.json), so quoting them in '' is safe.
*/}}
{{- define "octorun.selectorCEL" -}}
{{- $s := fromJson . -}}
{{- $terms := list -}}
{{- range $k, $v := $s.matchLabels -}}
{{- $terms = append $terms (printf "('%s' in variables.labels && variables.labels['%s'] == '%s')" $k $k $v) -}}
{{- end -}}
{{- range $s.matchExpressions -}}
{{- $values := list -}}
{{- range .values -}}{{- $values = append $values (printf "'%s'" .) -}}{{- end -}}
{{- $in := printf "('%s' in variables.labels && variables.labels['%s'] in [%s])" .key .key (join ", " $values) -}}
{{- if eq .operator "In" -}}{{- $terms = append $terms $in -}}
{{- else if eq .operator "NotIn" -}}{{- $terms = append $terms (printf "!%s" $in) -}}
{{- else if eq .operator "Exists" -}}{{- $terms = append $terms (printf "('%s' in variables.labels)" .key) -}}
{{- else if eq .operator "DoesNotExist" -}}{{- $terms = append $terms (printf "!('%s' in variables.labels)" .key) -}}
{{- else -}}{{- fail (printf "tenantNamespaces.selector: operator %q is not In, NotIn, Exists or DoesNotExist" .operator) -}}
{{- end -}}
{{- end -}}
{{- if $terms -}}{{- join " && " $terms -}}{{- else -}}true{{- end -}}
{{- end -}}
