// deploy/chart/octorun rendered with `helm template` and parsed: what each
// value set produces (objects, names, the manager's arguments, volumes,
// RBAC), and that the pieces that refer to each other agree (Services select
// the pods, mounted paths are the ones passed to the manager, the certificate
// names the webhook Service).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test/chart/helm.hpp"
#include "test/chart/render_support.hpp"

namespace octorun::test {
namespace {

// The probes: exec probes asking the loopback listener of their own; no
// container port for it, and no httpGet that would need the pod IP.
TEST(ChartRender, ProbesAreExecProbesOnALoopbackListenerOfTheirOwn) {
  auto c = manager_container(deployment(ok("--set probes.port=8090")));
  EXPECT_TRUE(has(args_of(c), "--health-bind=127.0.0.1"));
  EXPECT_TRUE(has(args_of(c), "--health-port=8090"));
  for (const char* probe : {"livenessProbe", "readinessProbe"}) {
    EXPECT_FALSE(c[probe]["httpGet"]) << probe;
    std::vector<std::string> command;
    for (const auto& word : c[probe]["exec"]["command"]) command.push_back(word.as<std::string>());
    ASSERT_GE(command.size(), 3u) << probe;
    EXPECT_EQ(command[0], "/usr/bin/octorun");
    EXPECT_EQ(command[1], "probe");
    EXPECT_TRUE(has(command, "--port=8090")) << probe;
  }
  for (const auto& port : c["ports"]) EXPECT_NE(port["containerPort"].as<int>(), 8090);
}

TEST(ChartRender, DefaultsRenderTheManagerWithSelfManagedAdmissionAndNoWebhookIntake) {
  auto r = ok("");
  auto d = deployment(r);
  EXPECT_EQ(d["metadata"]["namespace"].as<std::string>(), "octorun-system");
  EXPECT_EQ(d["spec"]["replicas"].as<int>(), 2);
  auto c = manager_container(d);
  EXPECT_EQ(str(c["image"]), "octorun:0.1.0");
  EXPECT_EQ(str(c["imagePullPolicy"]), "IfNotPresent");
  auto args = args_of(c);
  for (const char* a :
       {"--log-level=info", "--log-format=json", "--leader-elect", "--lease-namespace=octorun-system",
        "--lease-name=octorun-manager", "--health-bind=127.0.0.1", "--health-port=8082",
        "--metrics-bind=$(POD_IP)", "--metrics-port=8081", "--webhook-intake=false", "--admission",
        "--admission-bind=$(POD_IP)", "--admission-port=9443",
        "--admission-ca-secret=octorun-system/octorun-webhook-ca", "--admission-inject-ca=octorun",
        "--admission-dns-names=octorun-webhook.octorun-system.svc,octorun-webhook.octorun-system.svc.cluster."
        "local",
        "--scheduler.max-threads=2", "--max-runners=1000", "--platform-namespace=octorun-system",
        // Only the manager's own ServiceAccount creates Runners.
        "--runner-creator=system:serviceaccount:octorun-system:octorun-manager"})
    EXPECT_TRUE(has(args, a)) << a;
  // Unset values leave the manager's own defaults (no plain-http GitHub host).
  for (const char* a : {"--namespaces", "--kube-qps", "--kube-burst", "--github-workers", "--github-ca-file",
                        "--webhook-secret-file", "--webhook-sweep-seconds", "--runner-phase-events",
                        "--github-http-hosts", "--allow-sets-without-class"})
    EXPECT_FALSE(has_prefix(args, a)) << a;
  for (const auto& kind_name :
       std::vector<std::pair<std::string, std::string>>{{"ServiceAccount", "octorun-manager"},
                                                        {"ClusterRole", "octorun-manager"},
                                                        {"ClusterRoleBinding", "octorun-manager"},
                                                        {"Role", "octorun-manager-namespace"},
                                                        {"RoleBinding", "octorun-manager-namespace"},
                                                        {"ClusterRole", "octorun-webhook-ca-injector"},
                                                        {"ClusterRoleBinding", "octorun-webhook-ca-injector"},
                                                        {"Service", "octorun-webhook"},
                                                        {"Service", "octorun-manager-metrics"},
                                                        {"PodDisruptionBudget", "octorun-manager"},
                                                        {"MutatingWebhookConfiguration", "octorun"},
                                                        {"ValidatingWebhookConfiguration", "octorun"}})
    EXPECT_TRUE(r.find(kind_name.first, kind_name.second)) << kind_name.first << " " << kind_name.second;
  for (const char* kind : {"Namespace", "Secret", "Ingress", "ServiceMonitor", "Certificate", "Issuer"})
    EXPECT_TRUE(r.all(kind).empty()) << kind;
  EXPECT_FALSE(r.find("Service", "octorun-github-webhook"));
  // The CRDs are Helm's crds/, not templates.
  EXPECT_TRUE(r.all("CustomResourceDefinition").empty());
  // A manager serving every namespace judges RunnerClasses too.
  const auto& validating = (*r.find("ValidatingWebhookConfiguration", "octorun"))["webhooks"];
  ASSERT_EQ(validating.size(), 4u);
  EXPECT_EQ(str(validating[3]["rules"][0]["resources"][0]), "runnerclasses");
  EXPECT_FALSE(validating[3]["namespaceSelector"]);
}

TEST(ChartRender, DefaultSecurityContextsAreLockedDown) {
  auto r = ok("");
  auto spec = pod_spec(r);
  auto pod = spec["securityContext"];
  EXPECT_TRUE(pod["runAsNonRoot"].as<bool>());
  EXPECT_EQ(pod["runAsUser"].as<int>(), 65532);
  EXPECT_EQ(pod["runAsGroup"].as<int>(), 65532);
  EXPECT_EQ(str(pod["seccompProfile"]["type"]), "RuntimeDefault");
  auto c = manager_container(deployment(r))["securityContext"];
  EXPECT_TRUE(c["runAsNonRoot"].as<bool>());
  EXPECT_EQ(c["runAsUser"].as<int>(), 65532);
  EXPECT_TRUE(c["readOnlyRootFilesystem"].as<bool>());
  EXPECT_FALSE(c["allowPrivilegeEscalation"].as<bool>());
  ASSERT_EQ(c["capabilities"]["drop"].size(), 1u);
  EXPECT_EQ(str(c["capabilities"]["drop"][0]), "ALL");
  EXPECT_EQ(str(c["seccompProfile"]["type"]), "RuntimeDefault");
  // The self-generated certificates go to a writable emptyDir.
  EXPECT_EQ(mount_path(manager_container(deployment(r)), "tmp"), "/tmp");
  EXPECT_TRUE(volume(spec, "tmp")["emptyDir"].IsMap());
  EXPECT_FALSE(spec["hostNetwork"]);
  EXPECT_EQ(str(spec["dnsPolicy"]), "ClusterFirst");
}

TEST(ChartRender, EveryServiceSelectsTheManagerPodsOnANamedPort) {
  auto r = ok("--set githubWebhook.enabled=true --set githubWebhook.secret=s3cret");
  auto d = deployment(r);
  auto labels = d["spec"]["template"]["metadata"]["labels"];
  EXPECT_TRUE(selects(d["spec"]["selector"]["matchLabels"], labels));
  std::vector<std::string> ports;
  for (const auto& p : manager_container(d)["ports"]) ports.push_back(str(p["name"]));
  auto services = r.all("Service");
  EXPECT_EQ(services.size(), 3u);
  for (const auto& s : services) {
    EXPECT_TRUE(selects(s["spec"]["selector"], labels)) << s["metadata"]["name"];
    for (const auto& p : s["spec"]["ports"]) EXPECT_TRUE(has(ports, str(p["targetPort"]))) << p;
  }
  auto pdb = r.find("PodDisruptionBudget", "octorun-manager");
  ASSERT_TRUE(pdb);
  EXPECT_TRUE(selects((*pdb)["spec"]["selector"]["matchLabels"], labels));
  EXPECT_EQ((*pdb)["spec"]["minAvailable"].as<int>(), 1);
  // The webhooks call the Service that exists, on its port.
  auto svc = r.find("Service", "octorun-webhook");
  ASSERT_TRUE(svc);
  for (const char* kind : {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"})
    for (const auto& w : (*r.find(kind, "octorun"))["webhooks"]) {
      EXPECT_EQ(str(w["clientConfig"]["service"]["name"]), "octorun-webhook");
      EXPECT_EQ(str(w["clientConfig"]["service"]["namespace"]), "octorun-system");
      EXPECT_EQ(w["clientConfig"]["service"]["port"].as<int>(), (*svc)["spec"]["ports"][0]["port"].as<int>());
      EXPECT_FALSE(w["namespaceSelector"]) << "no watchNamespaces: every namespace";
    }
}

TEST(ChartRender, AWebhookSecretFromAValueIsCreatedMountedAndRollsThePodsWhenItChanges) {
  auto r = ok("--set githubWebhook.enabled=true --set githubWebhook.secret=first");
  auto secret = r.find("Secret", "octorun-github-webhook");
  ASSERT_TRUE(secret);
  EXPECT_EQ(str((*secret)["data"]["secret"]), "Zmlyc3Q=");  // base64("first")
  auto c = manager_container(deployment(r));
  auto args = args_of(c);
  EXPECT_TRUE(has(args, "--webhook-port=8080"));
  EXPECT_FALSE(has(args, "--webhook-intake=false"));
  // The file the manager reads is the Secret's key, where the volume is mounted.
  EXPECT_TRUE(has(args, "--webhook-secret-file=" + mount_path(c, "github-webhook") + "/secret"));
  EXPECT_FALSE(has_prefix(args, "--webhook-sweep-seconds"));  // the manager's default
  auto v = volume(pod_spec(r), "github-webhook");
  EXPECT_EQ(str(v["secret"]["secretName"]), "octorun-github-webhook");
  EXPECT_EQ(str(v["secret"]["items"][0]["key"]), "secret");
  auto service = r.find("Service", "octorun-github-webhook");
  ASSERT_TRUE(service);
  EXPECT_EQ((*service)["spec"]["ports"][0]["port"].as<int>(), 80);
  const auto checksum =
      str(deployment(r)["spec"]["template"]["metadata"]["annotations"]["checksum/github-webhook-secret"]);
  EXPECT_EQ(checksum.size(), 64u);
  auto changed = ok("--set githubWebhook.enabled=true --set githubWebhook.secret=second");
  EXPECT_NE(str(deployment(
                changed)["spec"]["template"]["metadata"]["annotations"]["checksum/github-webhook-secret"]),
            checksum);
}

TEST(ChartRender, TheSweepIntervalAndRunnerPhaseEventsBecomeArguments) {
  auto args = args_of(manager_container(deployment(
      ok("--set githubWebhook.enabled=true --set githubWebhook.secret=s --set githubWebhook.sweepSeconds=0 "
         "--set runnerPhaseEvents=false"))));
  EXPECT_TRUE(has(args, "--webhook-sweep-seconds=0"));  // 0 is a value: sweep only on taking the lead
  EXPECT_TRUE(has(args, "--runner-phase-events=false"));
  // Without the intake there is nothing to sweep.
  EXPECT_FALSE(has_prefix(args_of(manager_container(deployment(ok("--set githubWebhook.sweepSeconds=300")))),
                          "--webhook-sweep-seconds"));
}

TEST(ChartRender, AnExistingWebhookSecretIsMountedNotCreated) {
  auto r =
      ok("--set githubWebhook.enabled=true --set githubWebhook.existingSecret=gh --set "
         "githubWebhook.existingSecretKey=token");
  EXPECT_TRUE(r.all("Secret").empty());
  auto c = manager_container(deployment(r));
  EXPECT_TRUE(has(args_of(c), "--webhook-secret-file=" + mount_path(c, "github-webhook") + "/token"));
  EXPECT_EQ(str(volume(pod_spec(r), "github-webhook")["secret"]["secretName"]), "gh");
  EXPECT_FALSE(deployment(r)["spec"]["template"]["metadata"]["annotations"]);
}

TEST(ChartRender, TheIngressLeadsToTheWebhookIntakeService) {
  auto r =
      ok("--set githubWebhook.enabled=true --set githubWebhook.secret=s --set "
         "githubWebhook.ingress.enabled=true "
         "--set githubWebhook.ingress.host=ci.example.com --set githubWebhook.ingress.className=nginx");
  auto ing = r.find("Ingress", "octorun-github-webhook");
  ASSERT_TRUE(ing);
  EXPECT_EQ(str((*ing)["spec"]["ingressClassName"]), "nginx");
  auto rule = (*ing)["spec"]["rules"][0];
  EXPECT_EQ(str(rule["host"]), "ci.example.com");
  auto path = rule["http"]["paths"][0];
  EXPECT_EQ(str(path["path"]), "/webhook");
  EXPECT_EQ(str(path["pathType"]), "Prefix") << "each RunnerClass's /webhook/classes/<class> too";
  EXPECT_EQ(str(path["backend"]["service"]["name"]), "octorun-github-webhook");
  EXPECT_TRUE(r.find("Service", "octorun-github-webhook"));
}

// The default class's own webhook secret (docs/intakes.md), only when named.
TEST(ChartRender, TheDefaultClassNamesItsWebhookSecretOnlyWhenGiven) {
  auto plain = ok("");
  auto c = plain.find("RunnerClass", "standard");
  ASSERT_TRUE(c);
  EXPECT_FALSE((*c)["spec"]["github"]["webhookSecretRef"]);
  auto r = ok("--set runnerClasses.default.webhookSecretRef.name=standard-hook");
  c = r.find("RunnerClass", "standard");
  ASSERT_TRUE(c);
  EXPECT_EQ(str((*c)["spec"]["github"]["webhookSecretRef"]["name"]), "standard-hook");
  EXPECT_EQ(str((*c)["spec"]["github"]["webhookSecretRef"]["key"]), "secret");
}

TEST(ChartRender, WatchedNamespacesAreTheManagersAndTheWebhooksScope) {
  auto r = ok("--set watchNamespaces={team-a,team-b}");
  EXPECT_TRUE(has(args_of(manager_container(deployment(r))), "--namespaces=team-a,team-b"));
  for (const char* kind : {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"})
    for (const auto& w : (*r.find(kind, "octorun"))["webhooks"]) {
      EXPECT_NE(str(w["rules"][0]["scope"]), "Cluster")
          << "classes are judged by a manager serving every namespace";
      auto expr = w["namespaceSelector"]["matchExpressions"][0];
      EXPECT_EQ(str(expr["key"]), "kubernetes.io/metadata.name");
      EXPECT_EQ(str(expr["operator"]), "In");
      ASSERT_EQ(expr["values"].size(), 2u);
      EXPECT_EQ(str(expr["values"][0]), "team-a");
      EXPECT_EQ(str(expr["values"][1]), "team-b");
    }
  // An explicit selector wins.
  auto explicit_selector =
      ok("--set watchNamespaces={team-a} --set admission.namespaceSelector.matchLabels.octorun=enabled");
  auto w = (*explicit_selector.find("ValidatingWebhookConfiguration", "octorun"))["webhooks"][0];
  EXPECT_EQ(str(w["namespaceSelector"]["matchLabels"]["octorun"]), "enabled");
  EXPECT_FALSE(w["namespaceSelector"]["matchExpressions"]);
}

TEST(ChartRender, CertManagerWithAnIssuerReplacesTheSelfManagedCa) {
  auto r =
      ok("--set admission.certManager.enabled=true --set admission.certManager.issuerRef.name=corp-ca "
         "--set admission.certManager.issuerRef.kind=ClusterIssuer");
  auto cert = r.find("Certificate", "octorun-webhook");
  ASSERT_TRUE(cert);
  EXPECT_EQ(str((*cert)["spec"]["issuerRef"]["name"]), "corp-ca");
  EXPECT_EQ(str((*cert)["spec"]["issuerRef"]["kind"]), "ClusterIssuer");
  EXPECT_EQ(str((*cert)["spec"]["dnsNames"][0]), "octorun-webhook.octorun-system.svc");
  EXPECT_TRUE(r.all("Issuer").empty());
  for (const char* kind : {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"})
    EXPECT_EQ(str((*r.find(kind, "octorun"))["metadata"]["annotations"]["cert-manager.io/inject-ca-from"]),
              "octorun-system/octorun-webhook");
  auto c = manager_container(deployment(r));
  auto args = args_of(c);
  const auto dir = mount_path(c, "admission-certificate");
  EXPECT_EQ(dir, "/etc/octorun/admission");
  for (const auto& a : {"--admission-cert-file=" + dir + "/tls.crt",
                        "--admission-key-file=" + dir + "/tls.key", "--admission-ca-file=" + dir + "/ca.crt"})
    EXPECT_TRUE(has(args, a)) << a;
  EXPECT_FALSE(has_prefix(args, "--admission-ca-secret"));
  EXPECT_FALSE(has_prefix(args, "--admission-inject-ca"));
  EXPECT_EQ(str(volume(pod_spec(r), "admission-certificate")["secret"]["secretName"]),
            str((*cert)["spec"]["secretName"]));
  // Nothing for the manager's own CA.
  EXPECT_FALSE(r.find("ClusterRole", "octorun-webhook-ca-injector"));
  EXPECT_EQ(YAML::Dump((*r.find("Role", "octorun-manager-namespace"))["rules"]).find("webhook-ca"),
            std::string::npos);
}

TEST(ChartRender, CertManagerSelfSignedCreatesItsIssuerChain) {
  auto r = ok("--set admission.certManager.enabled=true --set admission.certManager.selfSigned=true");
  EXPECT_TRUE(r.find("Issuer", "octorun-webhook-selfsigned"));
  auto ca_issuer = r.find("Issuer", "octorun-webhook-ca");
  ASSERT_TRUE(ca_issuer);
  auto ca = r.find("Certificate", "octorun-webhook-ca");
  ASSERT_TRUE(ca);
  EXPECT_TRUE((*ca)["spec"]["isCA"].as<bool>());
  EXPECT_EQ(str((*ca_issuer)["spec"]["ca"]["secretName"]), str((*ca)["spec"]["secretName"]));
  EXPECT_EQ(str((*r.find("Certificate", "octorun-webhook"))["spec"]["issuerRef"]["name"]),
            "octorun-webhook-ca");
}

TEST(ChartRender, ClientLoggingAndLeaderElectionValuesBecomeArguments) {
  auto r =
      ok("--set kubeClient.qps=25 --set kubeClient.burst=50 --set logLevel=debug --set logFormat=text "
         "--set workerThreads=4 --set leaderElection.enabled=false --set replicas=1 --set pdb.enabled=false "
         "--set githubClient.workers=6 --set kubeClient.connections=24");
  auto args = args_of(manager_container(deployment(r)));
  for (const char* a :
       {"--kube-qps=25", "--kube-burst=50", "--kube-workers=24", "--github-workers=6", "--log-level=debug",
        "--log-format=text", "--scheduler.max-threads=4", "--leader-elect=false"})
    EXPECT_TRUE(has(args, a)) << a;
  EXPECT_FALSE(has(args, "--leader-elect"));
  EXPECT_FALSE(has_prefix(args, "--lease-"));
  EXPECT_TRUE(r.all("PodDisruptionBudget").empty());
  EXPECT_EQ(YAML::Dump((*r.find("Role", "octorun-manager-namespace"))["rules"]).find("leases"),
            std::string::npos);
}

TEST(ChartRender, ProxyEnvironmentAndAnExtraCaBundleReachTheManager) {
  auto r =
      ok("--set extraEnv[0].name=HTTPS_PROXY --set extraEnv[0].value=http://proxy:3128 "
         "--set extraEnv[1].name=NO_PROXY --set extraEnv[1].value=.svc "
         "--set extraCABundle.configMapName=ghes-ca --set extraCABundle.key=bundle.pem");
  auto c = manager_container(deployment(r));
  // After the chart's own POD_IP (the servers' bind address).
  ASSERT_EQ(c["env"].size(), 3u);
  EXPECT_EQ(str(c["env"][0]["name"]), "POD_IP");
  EXPECT_EQ(str(c["env"][1]["name"]), "HTTPS_PROXY");
  EXPECT_EQ(str(c["env"][1]["value"]), "http://proxy:3128");
  EXPECT_EQ(str(c["env"][2]["name"]), "NO_PROXY");
  EXPECT_TRUE(has(args_of(c), "--github-ca-file=" + mount_path(c, "github-ca") + "/bundle.pem"));
  auto v = volume(pod_spec(r), "github-ca");
  EXPECT_EQ(str(v["configMap"]["name"]), "ghes-ca");
  EXPECT_EQ(str(v["configMap"]["items"][0]["key"]), "bundle.pem");
  auto from_secret = ok("--set extraCABundle.secretName=ghes-ca");
  auto sv = volume(pod_spec(from_secret), "github-ca");
  EXPECT_EQ(str(sv["secret"]["secretName"]), "ghes-ca");
  EXPECT_EQ(str(sv["secret"]["items"][0]["key"]), "ca.crt");
}

TEST(ChartRender, HostNetworkSetsTheDnsPolicyAndRollsWithoutSurge) {
  auto r = ok("--set hostNetwork=true");
  auto spec = pod_spec(r);
  EXPECT_TRUE(spec["hostNetwork"].as<bool>());
  EXPECT_EQ(str(spec["dnsPolicy"]), "ClusterFirstWithHostNet");
  EXPECT_EQ(deployment(r)["spec"]["strategy"]["rollingUpdate"]["maxSurge"].as<int>(), 0);
  EXPECT_EQ(str(pod_spec(ok("--set hostNetwork=true --set dnsPolicy=Default"))["dnsPolicy"]), "Default");
}

TEST(ChartRender, SchedulingImageAndPodValuesPassThrough) {
  auto r = ok(
      "--set image.repository=registry.example.com/octorun --set image.tag=1.2.3 "
      "--set image.pullPolicy=Never --set image.pullSecrets={regcred} --set replicas=3 "
      "--set nodeSelector.role=ci --set tolerations[0].key=ci --set tolerations[0].operator=Exists "
      "--set affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
      ".matchExpressions[0].key=zone "
      "--set affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
      ".matchExpressions[0].operator=Exists "
      "--set priorityClassName=system-cluster-critical --set podAnnotations.team=ci --set podLabels.tier=ops "
      "--set resources.limits.cpu=4 --set serviceAccount.annotations.iam=role");
  auto d = deployment(r);
  auto spec = d["spec"]["template"]["spec"];
  auto c = manager_container(d);
  EXPECT_EQ(d["spec"]["replicas"].as<int>(), 3);
  EXPECT_EQ(str(c["image"]), "registry.example.com/octorun:1.2.3");
  EXPECT_EQ(str(c["imagePullPolicy"]), "Never");
  EXPECT_EQ(str(spec["imagePullSecrets"][0]["name"]), "regcred");
  EXPECT_EQ(str(spec["nodeSelector"]["role"]), "ci");
  EXPECT_EQ(str(spec["tolerations"][0]["key"]), "ci");
  EXPECT_TRUE(spec["affinity"]["nodeAffinity"]);
  EXPECT_FALSE(spec["affinity"]["podAntiAffinity"]) << "affinity replaces the default spreading";
  EXPECT_EQ(str(spec["priorityClassName"]), "system-cluster-critical");
  EXPECT_EQ(str(d["spec"]["template"]["metadata"]["annotations"]["team"]), "ci");
  EXPECT_EQ(str(d["spec"]["template"]["metadata"]["labels"]["tier"]), "ops");
  EXPECT_EQ(str(c["resources"]["limits"]["cpu"]), "4");
  EXPECT_EQ(str(c["resources"]["limits"]["memory"]), "512Mi") << "a --set merges into the defaults";
  EXPECT_EQ(str((*r.find("ServiceAccount", "octorun-manager"))["metadata"]["annotations"]["iam"]), "role");
  // The default: replicas prefer different nodes.
  EXPECT_TRUE(
      pod_spec(ok(""))["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]);
}

TEST(ChartRender, TheServiceMonitorSelectsTheMetricsService) {
  auto r = ok("--set metrics.serviceMonitor.enabled=true --set metrics.serviceMonitor.labels.release=prom");
  auto sm = r.find("ServiceMonitor", "octorun-manager");
  ASSERT_TRUE(sm);
  EXPECT_EQ(str((*sm)["metadata"]["labels"]["release"]), "prom");
  auto svc = r.find("Service", "octorun-manager-metrics");
  ASSERT_TRUE(svc);
  EXPECT_TRUE(selects((*sm)["spec"]["selector"]["matchLabels"], (*svc)["metadata"]["labels"]));
  EXPECT_EQ(str((*sm)["spec"]["endpoints"][0]["port"]), str((*svc)["spec"]["ports"][0]["name"]));
}

TEST(ChartRender, ThePdbTakesMaxUnavailableInstead) {
  auto r = ok("--set pdb.minAvailable=null --set pdb.maxUnavailable=1");
  auto pdb = r.find("PodDisruptionBudget", "octorun-manager");
  ASSERT_TRUE(pdb);
  EXPECT_EQ((*pdb)["spec"]["maxUnavailable"].as<int>(), 1);
  EXPECT_FALSE((*pdb)["spec"]["minAvailable"]);
  EXPECT_EQ(str((*ok("--set pdb.minAvailable=50%")
                      .find("PodDisruptionBudget", "octorun-manager"))["spec"]["minAvailable"]),
            "50%");
}

TEST(ChartRender, NamesFollowTheReleaseAndTheOverrides) {
  auto r = ok("", "ci");
  EXPECT_TRUE(r.find("Deployment", "ci-octorun-manager"));
  EXPECT_TRUE(r.find("Service", "ci-octorun-webhook"));
  auto args = args_of(manager_container(deployment(r, "ci-octorun-manager")));
  EXPECT_TRUE(has(args, "--admission-inject-ca=ci-octorun"));
  EXPECT_TRUE(has(args, "--lease-name=ci-octorun-manager"));
  EXPECT_TRUE(r.find("ValidatingWebhookConfiguration", "ci-octorun"));
  auto o = ok("--set fullnameOverride=runners", "ci");
  EXPECT_TRUE(o.find("Deployment", "runners-manager"));
  EXPECT_TRUE(o.find("MutatingWebhookConfiguration", "runners"));
  auto sa = ok("--set serviceAccount.create=false --set serviceAccount.name=existing");
  for (const auto& made : sa.all("ServiceAccount"))  // the uninstall hook's own, deleted once it ran
    EXPECT_EQ(str(made["metadata"]["labels"]["app.kubernetes.io/component"]), "uninstall-hook");
  EXPECT_EQ(str(pod_spec(sa)["serviceAccountName"]), "existing");
  EXPECT_EQ(str((*sa.find("ClusterRoleBinding", "octorun-manager"))["subjects"][0]["name"]), "existing");
}

TEST(ChartRender, AdmissionOffRendersNoWebhookObjects) {
  auto r = ok("--set admission.enabled=false");
  for (const char* kind : {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"})
    EXPECT_TRUE(r.all(kind).empty()) << kind;
  EXPECT_FALSE(r.find("Service", "octorun-webhook"));
  EXPECT_FALSE(r.find("ClusterRole", "octorun-webhook-ca-injector"));
  EXPECT_FALSE(has_prefix(args_of(manager_container(deployment(r))), "--admission"));
}

TEST(ChartRender, CreateNamespaceRendersTheReleaseNamespace) {
  auto r = ok("--set createNamespace=true");
  EXPECT_TRUE(r.find("Namespace", "octorun-system"));
}

// ---- monitoring and autoscaling ---------------------------------------------------

std::string monitoring_file(const std::string& name) {
  std::ifstream in(std::string(OCTORUN_DEPLOY_DIR) + "/monitoring/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The adapter rules are deploy/monitoring's file (what the autoscaling test
// runs the adapter with); honor_labels users get them on `namespace`.
TEST(ChartRender, ThePrometheusAdapterRulesAreDeployMonitoringsWithTheNamespaceLabelChosen) {
  auto cm = ok("").find("ConfigMap", "octorun-prometheus-adapter-rules");
  ASSERT_TRUE(cm);
  EXPECT_EQ(str((*cm)["data"]["config.yaml"]), monitoring_file("prometheus-adapter-rules.yaml"));
  auto honoured = ok("--set monitoring.prometheusAdapterRules.namespaceLabel=namespace")
                      .find("ConfigMap", "octorun-prometheus-adapter-rules");
  ASSERT_TRUE(honoured);
  auto config = YAML::Load(str((*honoured)["data"]["config.yaml"]));
  ASSERT_EQ(config["rules"].size(), 3u);
  for (const auto& rule : config["rules"]) {
    EXPECT_EQ(str(rule["resources"]["overrides"]["namespace"]["resource"]), "namespace");
    EXPECT_FALSE(rule["resources"]["overrides"]["exported_namespace"]);
    EXPECT_NE(str(rule["seriesQuery"]).find("{namespace!=\"\""), std::string::npos)
        << str(rule["seriesQuery"]);
  }
  EXPECT_FALSE(ok("--set monitoring.prometheusAdapterRules.enabled=false")
                   .find("ConfigMap", "octorun-prometheus-adapter-rules"));
}

TEST(ChartRender, TheAlertsAndTheDashboardAreDeployMonitorings) {
  auto r =
      ok("--set monitoring.prometheusRule.enabled=true --set monitoring.prometheusRule.labels.release=prom "
         "--set monitoring.grafanaDashboard.enabled=true");
  auto rule = r.find("PrometheusRule", "octorun");
  ASSERT_TRUE(rule);
  EXPECT_EQ(str((*rule)["metadata"]["labels"]["release"]), "prom");
  auto file = YAML::Load(monitoring_file("alerts.yaml"));
  ASSERT_EQ((*rule)["spec"]["groups"].size(), file["groups"].size());
  for (std::size_t g = 0; g < file["groups"].size(); ++g) {
    const auto& want = file["groups"][g]["rules"];
    const auto& got = (*rule)["spec"]["groups"][g]["rules"];
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(str(got[i]["alert"]), str(want[i]["alert"]));
      EXPECT_EQ(str(got[i]["expr"]), str(want[i]["expr"]));
    }
  }
  auto dashboard = r.find("ConfigMap", "octorun-grafana-dashboard");
  ASSERT_TRUE(dashboard);
  EXPECT_EQ(str((*dashboard)["metadata"]["labels"]["grafana_dashboard"]), "1");
  auto json = monitoring_file("grafana-dashboard.json");
  while (!json.empty() && json.back() == '\n') json.pop_back();
  EXPECT_EQ(str((*dashboard)["data"]["octorun.json"]), json);
  // Off by default: they need the Prometheus Operator's CRD and a Grafana sidecar.
  EXPECT_FALSE(ok("").find("PrometheusRule", "octorun"));
  EXPECT_FALSE(ok("").find("ConfigMap", "octorun-grafana-dashboard"));
}

TEST(ChartRender, AnHpaPerRunnerSetScalesItOnItsBusyRunners) {
  auto r =
      ok("--set-json 'autoscaling.runnerSets=[{\"name\":\"ci\",\"namespace\":\"builds\",\"maxReplicas\":20},"
         "{\"name\":\"gpu\",\"minReplicas\":2,\"maxReplicas\":4,\"targetBusyRatio\":0.5,"
         "\"scaleDownStabilizationSeconds\":0}]'");
  auto ci = r.find("HorizontalPodAutoscaler", "ci");
  ASSERT_TRUE(ci);
  const auto& spec = (*ci)["spec"];
  EXPECT_EQ(str((*ci)["metadata"]["namespace"]), "builds");
  EXPECT_EQ(str(spec["scaleTargetRef"]["apiVersion"]), "octorun.io/v1alpha1");
  EXPECT_EQ(str(spec["scaleTargetRef"]["kind"]), "RunnerSet");
  EXPECT_EQ(str(spec["scaleTargetRef"]["name"]), "ci");
  EXPECT_EQ(str(spec["minReplicas"]), "1");
  EXPECT_EQ(str(spec["maxReplicas"]), "20");
  const auto& metric = spec["metrics"][0];
  EXPECT_EQ(str(metric["type"]), "Object");
  EXPECT_EQ(str(metric["object"]["describedObject"]["name"]), "ci");
  EXPECT_EQ(str(metric["object"]["metric"]["name"]), "busy_runners");
  EXPECT_EQ(str(metric["object"]["target"]["type"]), "AverageValue");
  EXPECT_EQ(str(metric["object"]["target"]["averageValue"]), "800m");
  EXPECT_EQ(str(spec["behavior"]["scaleDown"]["stabilizationWindowSeconds"]), "300");
  auto gpu = r.find("HorizontalPodAutoscaler", "gpu");
  ASSERT_TRUE(gpu);
  EXPECT_EQ(str((*gpu)["metadata"]["namespace"]), "octorun-system");
  EXPECT_EQ(str((*gpu)["spec"]["minReplicas"]), "2");
  EXPECT_EQ(str((*gpu)["spec"]["metrics"][0]["object"]["target"]["averageValue"]), "500m");
  EXPECT_EQ(str((*gpu)["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"]), "0");
  EXPECT_TRUE(ok("").all("HorizontalPodAutoscaler").empty());
}

// The default RunnerClass says how the manager's own GitHub requests for its
// sets travel only when asked to: its proxy, and a CA bundle as PEM text.
TEST(ChartRender, TheDefaultClassCarriesTheProxyAndCaOfTheManagersConnectionsWhenGiven) {
  auto plain = ok("").find("RunnerClass", "standard");
  ASSERT_TRUE(plain.has_value());
  EXPECT_FALSE((*plain)["spec"]["github"]["proxy"]);
  EXPECT_FALSE((*plain)["spec"]["github"]["caBundle"]);

  const std::string pem = "-----BEGIN CERTIFICATE-----\nMIIBcorp\n-----END CERTIFICATE-----\n";
  char path[] = "/tmp/octorun-chart-ca-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << pem;
  auto r =
      ok("--set runnerClasses.default.proxy.url=http://egress.corp:3128"
         " --set runnerClasses.default.proxy.credentialsSecretName=egress-login"
         " --set-file runnerClasses.default.caBundle=" +
         std::string(path));
  std::remove(path);
  auto c = r.find("RunnerClass", "standard");
  ASSERT_TRUE(c.has_value());
  const auto github = (*c)["spec"]["github"];
  EXPECT_EQ(str(github["proxy"]["url"]), "http://egress.corp:3128");
  EXPECT_EQ(str(github["proxy"]["credentialsSecretName"]), "egress-login");
  EXPECT_EQ(str(github["caBundle"]), pem);
}

}  // namespace
}  // namespace octorun::test
