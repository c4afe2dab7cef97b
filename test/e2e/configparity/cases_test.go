package configparity

// parityCases is the corpus: files both schedulers accept, exercising every
// shared field and every shared plugin's args, and files both refuse, one
// validation edge each. The header (apiVersion, kind) is added unless raw.
var parityCases = []parityCase{
	// Accepted: settings.
	{name: "empty", file: ``},
	{name: "settings", file: `
parallelism: 8
percentageOfNodesToScore: 30
podInitialBackoffSeconds: 2
podMaxBackoffSeconds: 20
enableProfiling: false
`},
	{name: "contention profiling without profiling", file: `
enableProfiling: false
enableContentionProfiling: true
`},
	{name: "backoffs equal", file: `
podInitialBackoffSeconds: 5
podMaxBackoffSeconds: 5
`},
	{name: "percentage 100", file: "percentageOfNodesToScore: 100\n"},
	{name: "percentage 0", file: "percentageOfNodesToScore: 0\n"},
	{name: "client connection", file: `
clientConnection:
  kubeconfig: KUBECONFIG_PATH
  qps: 10.5
  burst: 20
  contentType: application/json
  acceptContentTypes: application/json
`},
	{name: "client connection zeros are defaults", file: `
clientConnection:
  qps: 0
  burst: 0
  contentType: ""
`},
	{name: "negative qps", file: "clientConnection: {qps: -1}\n"},
	{name: "leader election", file: `
leaderElection:
  leaderElect: true
  leaseDuration: 30s
  renewDeadline: 20s
  retryPeriod: 5s
  resourceLock: leases
  resourceName: my-lease
  resourceNamespace: sched
`},
	{name: "leader election zero durations are defaults", file: `
leaderElection:
  leaseDuration: 0s
  renewDeadline: 0s
  retryPeriod: 0s
`},
	{name: "leader election off skips its checks", file: `
leaderElection:
  leaderElect: false
  leaseDuration: 1s
  renewDeadline: 5s
  resourceLock: endpoints
`},
	{name: "yaml 1.1 boolean", file: "leaderElection: {leaderElect: no}\nenableProfiling: off\n"},
	{name: "json", raw: true, file: `{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "parallelism": 4}`},
	{name: "explicit empty profiles", file: "profiles: []\n"},
	{name: "delayCacheUntilActive false", file: "delayCacheUntilActive: false\n"},
	{name: "delayCacheUntilActive true", file: "delayCacheUntilActive: true\n"},
	{name: "empty extenders", file: "extenders: []\n"},
	{name: "extenders", file: `
extenders:
- urlPrefix: http://127.0.0.1:1
  filterVerb: filter
- urlPrefix: https://127.0.0.1:2/scheduler/
  filterVerb: filter
  prioritizeVerb: prioritize
  preemptVerb: preempt
  bindVerb: bind
  weight: 5
  enableHTTPS: true
  tlsConfig:
    insecure: false
    serverName: extender
  httpTimeout: 3s
  nodeCacheCapable: true
  ignorable: true
  managedResources:
  - name: example.com/gpu
    ignoredByScheduler: true
  - name: example.com/fpga
`},
	{name: "extender resources ignored by NodeResourcesFit replace its list", file: `
extenders:
- urlPrefix: http://127.0.0.1:1
  managedResources:
  - {name: example.com/gpu, ignoredByScheduler: true}
  - {name: example.com/nic, ignoredByScheduler: true}
profiles:
- schedulerName: one
  pluginConfig:
  - name: NodeResourcesFit
    args: {ignoredResources: [example.com/fpga], ignoredResourceGroups: [vendor.io]}
- schedulerName: two
`},
	{name: "extender without a positive weight", file: "extenders:\n- {urlPrefix: http://127.0.0.1:1, prioritizeVerb: p, weight: 0}\n", refused: "extenders[0].weight"},
	{name: "extender managing a native resource", file: "extenders:\n- urlPrefix: http://127.0.0.1:1\n  managedResources: [{name: memory}]\n", refused: "extenders[0].managedResources[0].name"},
	{name: "extenders managing one resource", file: "extenders:\n- urlPrefix: http://127.0.0.1:1\n  managedResources: [{name: example.com/gpu}]\n- urlPrefix: http://127.0.0.1:2\n  managedResources: [{name: example.com/gpu}]\n", refused: "extenders[1].managedResources[0].name"},
	{name: "extender CA not PEM", file: "extenders:\n- urlPrefix: https://127.0.0.1:1\n  tlsConfig: {caData: aGVsbG8=}\n", refused: "extenders[0].tlsConfig", kubeSays: "couldn't build extenders"},
	{name: "two extenders binding", file: "extenders:\n- {urlPrefix: http://127.0.0.1:1, bindVerb: b}\n- {urlPrefix: http://127.0.0.1:2, bindVerb: b}\n", refused: "extenders"},

	// Accepted: profiles and plugins.
	{name: "named profile with percentage", file: `
profiles:
- schedulerName: one
  percentageOfNodesToScore: 50
`},
	{name: "two profiles", file: `
profiles:
- schedulerName: a
- schedulerName: b
  plugins:
    score:
      disabled: [{name: ImageLocality}]
`},
	{name: "multiPoint re-enable resets weight", file: `
profiles:
- plugins:
    multiPoint:
      enabled: [{name: TaintToleration}]
`},
	{name: "multiPoint weight", file: `
profiles:
- plugins:
    multiPoint:
      enabled: [{name: TaintToleration, weight: 5}, {name: ImageLocality, weight: 7}]
`},
	{name: "score enabled without weight", file: `
profiles:
- plugins:
    score:
      enabled: [{name: NodeAffinity}]
`},
	{name: "score enabled reorders", file: `
profiles:
- plugins:
    score:
      enabled: [{name: ImageLocality, weight: 4}, {name: TaintToleration}]
`},
	{name: "score weight 0 is 1", file: `
profiles:
- plugins:
    score:
      enabled: [{name: PodTopologySpread, weight: 0}]
`},
	{name: "score only one", file: `
profiles:
- plugins:
    score:
      disabled: [{name: "*"}]
      enabled: [{name: ImageLocality, weight: 3}]
`},
	{name: "multiPoint wildcard", file: `
profiles:
- plugins:
    multiPoint:
      disabled: [{name: "*"}]
      enabled:
      - name: PrioritySort
      - name: DefaultBinder
      - name: NodeResourcesFit
        weight: 2
      - name: NodeName
      - name: TaintToleration
`},
	{name: "filter disabled", file: `
profiles:
- plugins:
    filter:
      disabled: [{name: NodePorts}, {name: VolumeZone}]
`},
	{name: "preFilter wildcard", file: `
profiles:
- plugins:
    preFilter:
      disabled: [{name: "*"}]
`},
	{name: "preFilter wildcard re-enable", file: `
profiles:
- plugins:
    preFilter:
      disabled: [{name: "*"}]
      enabled: [{name: NodeResourcesFit}]
`},
	{name: "multiPoint disabled then filter enabled", file: `
profiles:
- plugins:
    multiPoint:
      disabled: [{name: TaintToleration}]
    filter:
      enabled: [{name: TaintToleration}]
`},
	{name: "weight on a filter is ignored", file: `
profiles:
- plugins:
    filter:
      enabled: [{name: NodePorts, weight: 5}]
`},
	{name: "weight on a disabled plugin is ignored", file: `
profiles:
- plugins:
    score:
      disabled: [{name: ImageLocality, weight: 5}]
`},
	{name: "weight on a non-score plugin under multiPoint", file: `
profiles:
- plugins:
    multiPoint:
      enabled: [{name: NodePorts, weight: 5}]
`},
	{name: "disabled unknown plugin", file: `
profiles:
- plugins:
    filter:
      disabled: [{name: NoSuchPlugin}]
`},
	{name: "disabled where not implemented", file: `
profiles:
- plugins:
    preScore:
      disabled: [{name: ImageLocality}]
`},
	{name: "NodeName disabled at preFilter", file: `
profiles:
- plugins:
    preFilter:
      disabled: [{name: NodeName}]
`},
	{name: "the node-local filters at preFilter", file: `
profiles:
- plugins:
    preFilter:
      disabled: [{name: "*"}]
      enabled: [{name: TaintToleration}, {name: NodeName}, {name: NodeUnschedulable}]
`},
	{name: "preEnqueue disabled", file: `
profiles:
- plugins:
    preEnqueue:
      disabled: [{name: SchedulingGates}, {name: DefaultPreemption}]
`},
	{name: "postFilter disabled", file: `
profiles:
- plugins:
    postFilter:
      disabled: [{name: DefaultPreemption}]
`},
	{name: "reserve and preBind disabled", file: `
profiles:
- plugins:
    reserve:
      disabled: [{name: VolumeBinding}]
    preBind:
      disabled: [{name: "*"}]
`},
	{name: "queueSort restated in every profile", file: `
profiles:
- schedulerName: a
  plugins:
    queueSort:
      enabled: [{name: PrioritySort}]
- schedulerName: b
  plugins:
    queueSort:
      enabled: [{name: PrioritySort}]
`},
	{name: "bind restated", file: `
profiles:
- plugins:
    bind:
      enabled: [{name: DefaultBinder}]
`},

	{name: "disabled entry without a name", file: `
profiles:
- plugins:
    filter:
      disabled: [{name: ""}]
`},
	{name: "weight on the wildcard", file: `
profiles:
- plugins:
    score:
      disabled: [{name: "*", weight: 3}]
`},
	{name: "args type meta partly", file: `
profiles:
- pluginConfig:
  - name: InterPodAffinity
    args: {kind: InterPodAffinityArgs, hardPodAffinityWeight: 3}
  - name: NodeAffinity
    args: {apiVersion: kubescheduler.config.k8s.io/v1}
`},
	{name: "leader election off skips the lock", file: "leaderElection: {leaderElect: false, resourceLock: configmaps}\n"},

	{name: "queueSort weight 0 and none agree", file: `
profiles:
- schedulerName: a
  plugins:
    queueSort:
      enabled: [{name: PrioritySort, weight: 0}]
- schedulerName: b
  plugins:
    queueSort:
      enabled: [{name: PrioritySort}]
`},
	{name: "queueSort disabled weights are not compared", file: `
profiles:
- schedulerName: a
  plugins:
    queueSort:
      disabled: [{name: PrioritySort, weight: 3}]
      enabled: [{name: PrioritySort}]
- schedulerName: b
  plugins:
    queueSort:
      disabled: [{name: PrioritySort}]
      enabled: [{name: PrioritySort}]
`},
	{name: "only the built-in points", file: `
profiles:
- plugins:
    multiPoint:
      disabled: [{name: "*"}]
      enabled: [{name: PrioritySort}, {name: DefaultBinder}]
`},
	{name: "SchedulingGates re-enabled", file: `
profiles:
- plugins:
    preEnqueue:
      enabled: [{name: SchedulingGates}]
`},
	{name: "node affinity empty term", file: `
profiles:
- pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms: [{}]
`},
	{name: "node affinity match fields", file: `
profiles:
- pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchFields: [{key: metadata.name, operator: In, values: [n1]}]
`},
	{name: "null args fields are defaults", file: `
profiles:
- pluginConfig:
  - name: VolumeBinding
    args: {bindTimeoutSeconds: null}
  - name: InterPodAffinity
    args: {hardPodAffinityWeight: null}
  - name: DefaultPreemption
    args: {minCandidateNodesAbsolute: 0}
  - name: DynamicResources
    args: {filterTimeout: null}
`},
	{name: "global and profile percentage", file: `
percentageOfNodesToScore: 0
profiles:
- schedulerName: a
  percentageOfNodesToScore: 50
- schedulerName: b
  percentageOfNodesToScore: null
`},
	{name: "fit ratio with weight 0 resources", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        resources: [{name: cpu, weight: 0}, {name: example.com/gpu}]
        requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}
`},

	{name: "node affinity match field other than the name", file: `
profiles:
- pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchFields: [{key: metadata.labels, operator: In, values: [n1]}]
`},
	{name: "placement points disabled", file: `
profiles:
- plugins:
    placementGenerate:
      disabled: [{name: "*"}]
    placementScore:
      disabled: [{name: "*"}]
    podGroupPostFilter:
      disabled: [{name: "*"}]
`},
	{name: "args of yardmaster's own plugin", file: `
profiles:
- pluginConfig:
  - name: Explain
    args: {simulatorAnnotations: true}
`},

	{name: "score weight 0 wins over multiPoint's", file: `
profiles:
- plugins:
    score:
      enabled: [{name: ImageLocality, weight: 0}]
    multiPoint:
      enabled: [{name: ImageLocality, weight: 5}]
`},
	{name: "queue sort entry without args in one profile", file: `
profiles:
- schedulerName: a
- schedulerName: b
  pluginConfig:
  - name: PrioritySort
`},
	{name: "queue sort args equal in every profile", file: `
profiles:
- schedulerName: a
  pluginConfig:
  - name: PrioritySort
    args: {a: 1}
- schedulerName: b
  pluginConfig:
  - name: PrioritySort
    args: {a: 1}
`},
	{name: "schedulerName no pod can have, leader election off", file: `
leaderElection: {leaderElect: false}
profiles:
- schedulerName: My Scheduler
`},
	{name: "accept content types", file: "clientConnection: {acceptContentTypes: \"application/vnd.kubernetes.protobuf,application/json\"}\n"},

	// Accepted: plugin args.
	{name: "fit most allocated", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - {name: cpu, weight: 2}
        - {name: memory, weight: 1}
        - {name: nvidia.com/gpu, weight: 5}
`},
	{name: "fit type only", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: MostAllocated}
`},
	{name: "fit requested to capacity ratio", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        resources: [{name: cpu, weight: 100}]
        requestedToCapacityRatio:
          shape:
          - {utilization: 0, score: 10}
          - {utilization: 50, score: 2}
          - {utilization: 100, score: 0}
`},
	{name: "fit resource weight 0 is 1", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: LeastAllocated
        resources: [{name: cpu}, {name: memory, weight: 0}]
`},
	{name: "fit ignored resources", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      ignoredResources: [example.com/foo]
      ignoredResourceGroups: [example.org]
`},
	{name: "fit duplicate resources", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: LeastAllocated
        resources: [{name: cpu, weight: 1}, {name: cpu, weight: 2}]
`},
	{name: "fit args with type meta", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: NodeResourcesFitArgs
      scoringStrategy: {type: MostAllocated}
`},
	{name: "fit bad args while disabled", file: `
profiles:
- plugins:
    multiPoint:
      disabled: [{name: NodeResourcesFit}]
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: Bogus}
`},
	{name: "balanced allocation resources", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesBalancedAllocation
    args:
      resources: [{name: cpu, weight: 1}, {name: nvidia.com/gpu, weight: 1}]
`},
	{name: "balanced allocation weight 0 is 1", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesBalancedAllocation
    args:
      resources: [{name: cpu}, {name: memory, weight: 0}]
`},
	{name: "spread list", file: `
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}
      - {maxSkew: 3, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway}
`},
	{name: "spread list empty", file: `
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args: {defaultingType: List}
`},
	{name: "spread system", file: `
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args: {defaultingType: System}
`},
	{name: "inter-pod affinity", file: `
profiles:
- pluginConfig:
  - name: InterPodAffinity
    args: {hardPodAffinityWeight: 0, ignorePreferredTermsOfExistingPods: true}
`},
	{name: "inter-pod affinity 100", file: `
profiles:
- pluginConfig:
  - name: InterPodAffinity
    args: {hardPodAffinityWeight: 100}
`},
	{name: "node affinity added", file: `
profiles:
- pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - {key: pool, operator: In, values: [a, b]}
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 5
          preference:
            matchExpressions:
            - {key: disk, operator: Exists}
`},
	{name: "volume binding timeout", file: `
profiles:
- pluginConfig:
  - name: VolumeBinding
    args: {bindTimeoutSeconds: 300}
`},
	{name: "volume binding timeout 0", file: `
profiles:
- pluginConfig:
  - name: VolumeBinding
    args: {bindTimeoutSeconds: 0}
`},
	{name: "dynamic resources", file: `
profiles:
- pluginConfig:
  - name: DynamicResources
    args: {filterTimeout: 0s, bindingTimeout: 5m}
`},
	{name: "default preemption", file: `
profiles:
- pluginConfig:
  - name: DefaultPreemption
    args: {minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 10}
`},
	{name: "default preemption partial", file: `
profiles:
- pluginConfig:
  - name: DefaultPreemption
    args: {minCandidateNodesPercentage: 50}
`},
	{name: "args of a plugin nothing enables", file: `
profiles:
- plugins:
    multiPoint:
      disabled: [{name: InterPodAffinity}]
  pluginConfig:
  - name: InterPodAffinity
    args: {hardPodAffinityWeight: 7}
`},
	{name: "args of an unknown plugin", file: `
profiles:
- pluginConfig:
  - name: SomeOutOfTreePlugin
    args: {anything: 1}
`},
	{name: "args of a plugin without args", file: `
profiles:
- pluginConfig:
  - name: TaintToleration
    args: {foo: bar}
`},
	{name: "args in two profiles", file: `
profiles:
- schedulerName: packer
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: MostAllocated}
- schedulerName: spreader
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: LeastAllocated}
`},

	{name: "multiPoint enabled and disabled moves to the end", file: `
profiles:
- plugins:
    multiPoint:
      enabled: [{name: TaintToleration, weight: 4}]
      disabled: [{name: TaintToleration}]
`},
	{name: "score enabled and disabled", file: `
profiles:
- plugins:
    score:
      enabled: [{name: TaintToleration, weight: 6}]
      disabled: [{name: TaintToleration}]
`},
	{name: "multiPoint and filter enable the same", file: `
profiles:
- plugins:
    multiPoint:
      enabled: [{name: NodePorts}]
    filter:
      enabled: [{name: NodePorts}]
`},
	{name: "score weight wins over multiPoint", file: `
profiles:
- plugins:
    multiPoint:
      enabled: [{name: ImageLocality, weight: 9}]
    score:
      enabled: [{name: ImageLocality, weight: 3}]
`},
	{name: "weights differ per profile", file: `
profiles:
- schedulerName: a
  plugins:
    score:
      enabled: [{name: ImageLocality, weight: 5}]
- schedulerName: b
`},
	{name: "fit args null", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args: null
`},
	{name: "fit args empty", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args: {}
`},
	{name: "fit empty resources", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: MostAllocated, resources: []}
`},
	{name: "fit ratio one point", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        requestedToCapacityRatio: {shape: [{utilization: 100, score: 10}]}
`},
	{name: "balanced allocation empty resources", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesBalancedAllocation
    args: {resources: []}
`},
	{name: "inter-pod affinity empty args", file: `
profiles:
- pluginConfig:
  - name: InterPodAffinity
    args: {}
`},
	{name: "node affinity preferred weight 0", file: `
profiles:
- pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 0
          preference:
            matchExpressions: [{key: "bad key!", operator: Exists}]
`},
	{name: "node affinity empty required terms", file: `
profiles:
- pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms: []
`},
	{name: "dynamic resources long timeouts", file: `
profiles:
- pluginConfig:
  - name: DynamicResources
    args: {filterTimeout: 5m, bindingTimeout: 1s}
`},
	{name: "pluginConfig without name", file: `
profiles:
- pluginConfig:
  - args: {a: 1}
`},
	{name: "null settings", file: "percentageOfNodesToScore: null\nextenders: null\nleaderElection: {resourceLock: \"\"}\n"},
	{name: "largest parallelism", file: "parallelism: 2147483647\n"},

	{name: "spread constraint fields", file: `
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - maxSkew: 1
        topologyKey: zone
        whenUnsatisfiable: DoNotSchedule
        minDomains: 2
        nodeAffinityPolicy: Ignore
        nodeTaintsPolicy: Honor
        matchLabelKeys: [app]
`},
	{name: "fit resource without name", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: LeastAllocated, resources: [{weight: 2}]}
`},
	{name: "yaml 1.1 booleans everywhere", file: "enableProfiling: Off\nleaderElection: {leaderElect: Y}\nenableContentionProfiling: yes\n"},
	{name: "hex number", file: "parallelism: 0x10\n"},

	// Accepted and refused: scalars as kube-scheduler's YAML 1.1 parser,
	// and its conversion to JSON, read them.
	{name: "whole float for an integer", file: "parallelism: 8.0\npodMaxBackoffSeconds: 1e2\n"},
	{name: "whole float for a weight", file: `
profiles:
- plugins:
    score:
      enabled: [{name: ImageLocality, weight: 2.0}]
`},
	{name: "whole float in args", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: 2.0}]}
`},
	{name: "float for a float", file: "clientConnection: {qps: 1e2}\n"},
	{name: "octal", file: "parallelism: 010\n"},
	{name: "underscores", file: "parallelism: 1_000\n"},
	{name: "0o", file: "parallelism: 0o10\n"},
	{name: "plus sign", file: "parallelism: +8\n"},
	{name: "leading zero not octal", file: "parallelism: 08\n"},
	{name: "binary", file: "parallelism: 0b11\n"},
	{name: "double underscore", file: "parallelism: 1__0\n"},
	{name: "trailing underscore", file: "parallelism: 0_1\n"},
	{name: "leading zero float", file: "parallelism: 09.0\n"},
	{name: "sexagesimal is a string", file: "profiles:\n- schedulerName: \"a\"\n  plugins: {}\n- schedulerName: 1:20\n"},
	{name: "date is a string", file: "leaderElection: {resourceName: 2024-01-01}\n"},
	{name: "JSON whole float for an integer", raw: true, file: `{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "parallelism": 8.0}`,
		refused: "parallelism", kubeSays: "parallelism"},
	{name: "yaml 1.1 boolean for a string", file: "profiles:\n- schedulerName: on\n", refused: "profiles[0].schedulerName", kubeSays: "schedulerName"},
	{name: "yaml 1.1 y and n for strings", file: "profiles:\n- schedulerName: y\n- schedulerName: n\n", refused: "profiles[1].schedulerName", kubeSays: "schedulerName"},
	{name: "yaml 1.1 boolean for a lease name", file: "leaderElection: {resourceName: no}\n", refused: "leaderElection.resourceName", kubeSays: "resourceName"},
	{name: "yaml 1.1 boolean in args", file: `
profiles:
- pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions: [{key: ssd, operator: In, values: [yes]}]
`, refused: "profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]", kubeSays: "values"},
	{name: "quoted yaml 1.1 boolean for a string", file: "profiles:\n- schedulerName: \"on\"\n  plugins: {}\n- schedulerName: \"off\"\n"},
	{name: "fraction for an integer", file: "parallelism: 8.5\n", refused: "parallelism", kubeSays: "parallelism"},
	{name: "whole float out of range", file: "parallelism: 1e10\n", refused: "parallelism", kubeSays: "parallelism"},
	{name: "string for a float", file: "clientConnection: {qps: \"5\"}\n", refused: "clientConnection.qps", kubeSays: "qps"},
	{name: "number for a duration", file: "leaderElection: {leaseDuration: 15}\n", refused: "leaderElection.leaseDuration", kubeSays: "leaseDuration"},
	{name: "string for an integer in args", file: `
profiles:
- pluginConfig:
  - name: VolumeBinding
    args: {bindTimeoutSeconds: "30"}
`, refused: "profiles[0].pluginConfig[0].args.bindTimeoutSeconds", kubeSays: "bindTimeoutSeconds"},
	{name: "merge keys", file: `
<<: {parallelism: 3}
profiles:
- schedulerName: a
  plugins: &pl
    score: {disabled: [{name: ImageLocality}]}
  pluginConfig:
  - &fit
    name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
- schedulerName: b
  plugins:
    <<: [*pl, {postFilter: {disabled: [{name: DefaultPreemption}]}}]
    filter: {disabled: [{name: NodePorts}]}
  pluginConfig:
  - <<: *fit
`},
	{name: "merge key overridden", file: `
profiles:
- &p {schedulerName: a, percentageOfNodesToScore: 20}
- <<: *p
  schedulerName: b
`, refused: "profiles[1].schedulerName", kubeSays: `key "schedulerName" already set`},
	{name: "merge of a scalar", file: "<<: 3\n", refused: "<<", kubeSays: "map merge requires map or sequence of maps"},
	{name: "YAML 1.1 directive", raw: true, file: "%YAML 1.1\n---\n" + header + "parallelism: 4\n"},
	{name: "JSON exponent for an integer", raw: true, file: `{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "parallelism": 1e1}`,
		refused: "parallelism", kubeSays: "parallelism"},
	{name: "JSON key twice", raw: true, file: `{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "parallelism": 1, "parallelism": 2}`,
		refused: "parallelism", kubeSays: "parallelism"},
	{name: "durations in other forms", file: "leaderElection: {leaseDuration: 1m30s, renewDeadline: 20.5s, retryPeriod: +3s}\n"},
	{name: "multiple documents", file: "parallelism: 4\n---\nparallelism: 5\n"},
	{name: "null sections", file: "leaderElection: null\nclientConnection: null\nprofiles: null\n"},

	// Refused: settings.
	{name: "parallelism 0", file: "parallelism: 0\n", refused: "parallelism"},
	{name: "parallelism negative", file: "parallelism: -1\n", refused: "parallelism"},
	{name: "parallelism string", file: "parallelism: \"8\"\n", refused: "parallelism", kubeSays: "parallelism"},
	{name: "parallelism fraction", file: "parallelism: 8.5\n", refused: "parallelism", kubeSays: "parallelism"},
	{name: "parallelism overflow", file: "parallelism: 3000000000\n", refused: "parallelism", kubeSays: "parallelism"},
	{name: "percentage 101", file: "percentageOfNodesToScore: 101\n", refused: "percentageOfNodesToScore"},
	{name: "percentage negative", file: "percentageOfNodesToScore: -1\n", refused: "percentageOfNodesToScore"},
	{name: "profile percentage 101", file: "profiles:\n- percentageOfNodesToScore: 101\n", refused: "profiles[0].percentageOfNodesToScore"},
	{name: "initial backoff 0", file: "podInitialBackoffSeconds: 0\n", refused: "podInitialBackoffSeconds"},
	{name: "max backoff below initial", file: "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 4\n", refused: "podMaxBackoffSeconds"},
	{name: "burst negative", file: "clientConnection: {burst: -1}\n", refused: "clientConnection.burst"},
	{name: "lease duration negative", file: "leaderElection: {leaseDuration: -1s}\n", refused: "leaderElection.leaseDuration"},
	{name: "renew deadline not below lease", file: "leaderElection: {leaseDuration: 10s, renewDeadline: 10s}\n", refused: "leaderElection.leaseDuration"},
	{name: "retry period negative", file: "leaderElection: {retryPeriod: -2s}\n", refused: "leaderElection.retryPeriod"},
	{name: "resource lock", file: "leaderElection: {resourceLock: endpointsleases}\n", refused: "leaderElection.resourceLock"},
	{name: "bad duration", file: "leaderElection: {leaseDuration: soon}\n", refused: "leaderElection.leaseDuration", kubeSays: "soon"},
	{name: "unknown field", file: "paralelism: 8\n", refused: "paralelism", kubeSays: `unknown field "paralelism"`},
	{name: "field in wrong case", file: "Parallelism: 8\n", refused: "Parallelism", kubeSays: `unknown field "Parallelism"`},
	{name: "field twice", file: "parallelism: 8\nparallelism: 9\n", refused: "parallelism", kubeSays: "parallelism"},
	{name: "unknown nested field", file: "leaderElection: {leaderElection: true}\n", refused: "leaderElection.leaderElection", kubeSays: `unknown field "leaderElection.leaderElection"`},
	{name: "v1beta3", raw: true, file: "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n", refused: "apiVersion", kubeSays: "v1beta3"},
	{name: "wrong kind", raw: true, file: "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeProxyConfiguration\n", refused: "kind", kubeSays: "KubeProxyConfiguration"},

	// Refused: profiles and plugins.
	{name: "duplicate profile", file: "profiles:\n- schedulerName: a\n- schedulerName: a\n", refused: "profiles[1].schedulerName"},
	{name: "unnamed second profile", file: "profiles:\n- schedulerName: a\n- {}\n", refused: "profiles[1].schedulerName"},
	{name: "empty profile name", file: "profiles:\n- schedulerName: \"\"\n", refused: "profiles[0].schedulerName"},
	{name: "unknown plugin", file: `
profiles:
- plugins:
    filter:
      enabled: [{name: NoSuchPlugin}]
`, refused: "profiles[0].plugins.filter.enabled[0].name", kubeSays: `"NoSuchPlugin" does not exist`},
	{name: "plugin where not implemented", file: `
profiles:
- plugins:
    filter:
      enabled: [{name: ImageLocality}]
`, refused: "profiles[0].plugins.filter.enabled[0].name", kubeSays: `plugin "ImageLocality" does not extend FilterPlugin`},
	{name: "NodeName at preFilter", file: `
profiles:
- plugins:
    preFilter:
      enabled: [{name: NodeName}]
`},
	{name: "ImageLocality at preFilter", file: `
profiles:
- plugins:
    preFilter:
      enabled: [{name: ImageLocality}]
`, refused: "profiles[0].plugins.preFilter.enabled[0].name", kubeSays: `plugin "ImageLocality" does not extend PreFilterPlugin`},
	{name: "plugin twice at a point", file: `
profiles:
- plugins:
    filter:
      enabled: [{name: NodePorts}, {name: NodePorts}]
`, refused: "profiles[0].plugins.filter.enabled[1].name", kubeSays: `"NodePorts" already registered`},
	{name: "plugin twice in multiPoint", file: `
profiles:
- plugins:
    multiPoint:
      enabled: [{name: ImageLocality}, {name: ImageLocality}]
`, refused: "profiles[0].plugins.multiPoint.enabled[1].name", kubeSays: `"ImageLocality" already registered`},
	{name: "negative weight", file: `
profiles:
- plugins:
    score:
      enabled: [{name: ImageLocality, weight: -1}]
`, refused: "profiles[0].plugins.score.enabled[0].weight", kubeSays: "overflow"},
	{name: "weight overflows int32", file: `
profiles:
- plugins:
    score:
      enabled: [{name: ImageLocality, weight: 2147483648}]
`, refused: "profiles[0].plugins.score.enabled[0].weight", kubeSays: "weight"},
	{name: "removed plugin", file: `
profiles:
- plugins:
    score:
      enabled: [{name: NodeResourcesLeastAllocated}]
`, refused: "profiles[0].plugins.score.enabled[0].name", kubeSays: "NodeResourcesLeastAllocated"},
	{name: "plugin invalid in v1 configured", file: `
profiles:
- pluginConfig:
  - name: EBSLimits
`, refused: "profiles[0].pluginConfig[0].name", kubeSays: "profiles[0].pluginConfig[0]"},
	{name: "plugin configured twice", file: `
profiles:
- pluginConfig:
  - name: InterPodAffinity
  - name: InterPodAffinity
`, refused: "profiles[0].pluginConfig[1]"},
	{name: "queueSort differs", file: `
profiles:
- schedulerName: a
  plugins:
    queueSort:
      enabled: [{name: PrioritySort}]
- schedulerName: b
`, refused: "profiles[1].plugins.queueSort"},
	{name: "queueSort disabled", file: `
profiles:
- plugins:
    queueSort:
      disabled: [{name: "*"}]
`, refused: "profiles[0].plugins.queueSort", kubeSays: "queue sort plugin"},
	{name: "bind disabled", file: `
profiles:
- plugins:
    bind:
      disabled: [{name: DefaultBinder}]
`, refused: "profiles[0].plugins.bind", kubeSays: "bind plugin"},
	{name: "enabled without name", file: `
profiles:
- plugins:
    filter:
      enabled: [{weight: 1}]
`, refused: "profiles[0].plugins.filter.enabled[0].name", kubeSays: `"" does not exist`},

	{name: "null profile", file: "profiles: [null]\n"},
	{name: "null plugin entry", file: "profiles:\n- plugins:\n    filter:\n      enabled: [null]\n", refused: "profiles[0].plugins.filter.enabled[0].name", kubeSays: `FilterPlugin "" does not exist`},
	{name: "queueSort args differ", file: `
profiles:
- schedulerName: a
  plugins:
    queueSort:
      enabled: [{name: PrioritySort}]
- schedulerName: b
  plugins:
    queueSort:
      enabled: [{name: PrioritySort}]
  pluginConfig:
  - name: PrioritySort
    args: {a: 1}
`, refused: "profiles[1].pluginConfig", kubeSays: "profiles[1].pluginConfig.args"},

	{name: "no queue sort", file: `
profiles:
- plugins:
    multiPoint:
      disabled: [{name: "*"}]
      enabled: [{name: DefaultBinder}]
`, refused: "profiles[0].plugins.queueSort", kubeSays: "queue sort plugin"},
	{name: "initial backoff above the default max", file: "podInitialBackoffSeconds: 20\n", refused: "podMaxBackoffSeconds"},
	{name: "node affinity Exists with values", file: `
profiles:
- pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions: [{key: a, operator: Exists, values: [x]}]
`, refused: "profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values"},
	{name: "node affinity Gt not a number", file: `
profiles:
- pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions: [{key: a, operator: Gt, values: [x]}]
`, refused: "profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]"},
	{name: "node affinity In without values", file: `
profiles:
- pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions: [{key: a, operator: In}]
`, refused: "profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values"},
	{name: "spread missing whenUnsatisfiable", file: `
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints: [{maxSkew: 1, topologyKey: zone}]
`, refused: "profiles[0].pluginConfig[0].args.defaultConstraints[0].whenUnsatisfiable"},
	{name: "spread bad topologyKey", file: `
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints: [{maxSkew: 1, topologyKey: "bad key!", whenUnsatisfiable: DoNotSchedule}]
`, refused: "profiles[0].pluginConfig[0].args.defaultConstraints[0].topologyKey"},
	{name: "no kind", raw: true, file: "{}", refused: "kind", kubeSays: "Kind"},
	{name: "a document marker first", raw: true, file: "---\n" + header},
	{name: "two apiVersions", raw: true, file: "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\napiVersion: kubescheduler.config.k8s.io/v1\n", refused: "apiVersion", kubeSays: "apiVersion"},

	{name: "queue sort args without queueSort written", file: `
profiles:
- schedulerName: a
- schedulerName: b
  pluginConfig:
  - name: PrioritySort
    args: {a: 1}
`, refused: "profiles[1].pluginConfig", kubeSays: `different queue sort plugin args for profile "b"`},
	{name: "queue sort args in the first profile only", file: `
profiles:
- schedulerName: a
  pluginConfig:
  - name: PrioritySort
    args: {a: 1}
- schedulerName: b
`, refused: "profiles[1]", kubeSays: `different queue sort plugin args for profile "b"`},
	{name: "queue sort empty args in one profile", file: `
profiles:
- schedulerName: a
- schedulerName: b
  pluginConfig:
  - name: PrioritySort
    args: {}
`, refused: "profiles[1].pluginConfig", kubeSays: `different queue sort plugin args for profile "b"`},

	// Refused: plugin args.
	{name: "fit bad args while every point disables it", file: `
profiles:
- plugins:
    preFilter: {disabled: [{name: NodeResourcesFit}]}
    filter: {disabled: [{name: NodeResourcesFit}]}
    preScore: {disabled: [{name: NodeResourcesFit}]}
    score: {disabled: [{name: NodeResourcesFit}]}
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: Bogus}
`, refused: "profiles[0].pluginConfig[0].args.scoringStrategy.type", kubeSays: "scoringStrategy.type"},
	{name: "fit bogus type", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: Bogus}
`, refused: "profiles[0].pluginConfig[0].args.scoringStrategy.type", kubeSays: "scoringStrategy.type"},
	{name: "fit strategy without type", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy: {resources: [{name: cpu, weight: 1}]}
`, refused: "profiles[0].pluginConfig[0].args.scoringStrategy.type", kubeSays: "scoringStrategy.type"},
	{name: "fit ratio without shape", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: RequestedToCapacityRatio}
`, refused: "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio", kubeSays: "scoringStrategy.requestedToCapacityRatio"},
	{name: "fit ratio empty shape", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: []}}
`, refused: "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape", kubeSays: "requestedToCapacityRatio.shape"},
	{name: "fit shape with other type", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}]}
`, refused: "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio", kubeSays: "scoringStrategy.requestedToCapacityRatio"},
	{name: "fit shape unsorted", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        requestedToCapacityRatio: {shape: [{utilization: 50, score: 1}, {utilization: 50, score: 2}]}
`, refused: "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[1].utilization", kubeSays: "shape[1].utilization"},
	{name: "fit shape utilization 101", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        requestedToCapacityRatio: {shape: [{utilization: 101, score: 1}]}
`, refused: "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[0].utilization", kubeSays: "shape[0].utilization"},
	{name: "fit shape score 11", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        requestedToCapacityRatio: {shape: [{utilization: 10, score: 11}]}
`, refused: "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[0].score", kubeSays: "shape[0].score"},
	{name: "fit resource weight 101", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: 101}]}
`, refused: "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight", kubeSays: "resources[0].weight"},
	{name: "fit resource weight negative", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: -1}]}
`, refused: "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight", kubeSays: "resources[0].weight"},
	{name: "fit ignored group with slash", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args: {ignoredResourceGroups: [example.com/foo]}
`, refused: "profiles[0].pluginConfig[0].args.ignoredResourceGroups[0]", kubeSays: "ignoredResourceGroups[0]"},
	{name: "fit bad ignored resource", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args: {ignoredResources: ["bad name"]}
`, refused: "profiles[0].pluginConfig[0].args.ignoredResources[0]", kubeSays: "ignoredResources[0]"},
	{name: "args unknown field", file: `
profiles:
- pluginConfig:
  - name: InterPodAffinity
    args: {hardPodAffinityWeigth: 1}
`, refused: "profiles[0].pluginConfig[0].args.hardPodAffinityWeigth", kubeSays: "hardPodAffinityWeigth"},
	{name: "args wrong type", file: `
profiles:
- pluginConfig:
  - name: InterPodAffinity
    args: {hardPodAffinityWeight: "1"}
`, refused: "profiles[0].pluginConfig[0].args.hardPodAffinityWeight", kubeSays: "hardPodAffinityWeight"},
	{name: "args wrong kind", file: `
profiles:
- pluginConfig:
  - name: InterPodAffinity
    args: {kind: NodeAffinityArgs}
`, refused: "profiles[0].pluginConfig[0].args.kind", kubeSays: "NodeAffinityArgs"},
	{name: "balanced allocation weight 2", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesBalancedAllocation
    args: {resources: [{name: cpu, weight: 2}]}
`, refused: "profiles[0].pluginConfig[0].args.resources[0].weight"},
	{name: "balanced allocation duplicate", file: `
profiles:
- pluginConfig:
  - name: NodeResourcesBalancedAllocation
    args: {resources: [{name: cpu, weight: 1}, {name: cpu, weight: 1}]}
`, refused: "profiles[0].pluginConfig[0].args.resources[1].name"},
	{name: "spread bogus defaultingType", file: `
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args: {defaultingType: Sometimes}
`, refused: "profiles[0].pluginConfig[0].args.defaultingType"},
	{name: "spread system with constraints", file: `
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: System
      defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]
`, refused: "profiles[0].pluginConfig[0].args.defaultingType"},
	{name: "spread constraints without defaultingType", file: `
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args:
      defaultConstraints:
      - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}
`, refused: "profiles[0].pluginConfig[0].args.defaultingType"},
	{name: "spread maxSkew 0", file: `
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints: [{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]
`, refused: "profiles[0].pluginConfig[0].args.defaultConstraints[0].maxSkew"},
	{name: "spread label selector", file: `
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {a: b}}}
`, refused: "profiles[0].pluginConfig[0].args.defaultConstraints[0].labelSelector"},
	{name: "spread duplicate constraint", file: `
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}
      - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}
`, refused: "profiles[0].pluginConfig[0].args.defaultConstraints[1]"},
	{name: "spread bogus whenUnsatisfiable", file: `
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Maybe}]
`, refused: "profiles[0].pluginConfig[0].args.defaultConstraints[0].whenUnsatisfiable"},
	{name: "spread empty topologyKey", file: `
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints: [{maxSkew: 1, whenUnsatisfiable: DoNotSchedule}]
`, refused: "profiles[0].pluginConfig[0].args.defaultConstraints[0].topologyKey"},
	{name: "inter-pod affinity 101", file: `
profiles:
- pluginConfig:
  - name: InterPodAffinity
    args: {hardPodAffinityWeight: 101}
`, refused: "profiles[0].pluginConfig[0].args.hardPodAffinityWeight"},
	{name: "inter-pod affinity negative", file: `
profiles:
- pluginConfig:
  - name: InterPodAffinity
    args: {hardPodAffinityWeight: -1}
`, refused: "profiles[0].pluginConfig[0].args.hardPodAffinityWeight"},
	{name: "node affinity bad operator", file: `
profiles:
- pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions: [{key: pool, operator: Near, values: [a]}]
`, refused: "profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator"},
	{name: "node affinity bad preferred", file: `
profiles:
- pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 1
          preference:
            matchExpressions: [{key: "bad key!", operator: Exists}]
`,
		// The path lacks ".preference": kube-scheduler's nodeaffinity
		// helper names it so, and yardmaster names the same field.
		refused: "profiles[0].pluginConfig[0].args.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchExpressions[0].key"},
	{name: "volume binding negative timeout", file: `
profiles:
- pluginConfig:
  - name: VolumeBinding
    args: {bindTimeoutSeconds: -1}
`, refused: "profiles[0].pluginConfig[0].args.bindTimeoutSeconds"},
	{name: "volume binding shape", file: `
profiles:
- pluginConfig:
  - name: VolumeBinding
    args:
      shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]
`},
	{name: "volume binding empty shape is the default", file: `
profiles:
- pluginConfig:
  - name: VolumeBinding
    args: {shape: []}
`},
	{name: "volume binding null shape is the default", file: `
profiles:
- pluginConfig:
  - name: VolumeBinding
    args: {shape: null, bindTimeoutSeconds: 30}
`},
	{name: "volume binding shape of one point", file: `
profiles:
- pluginConfig:
  - name: VolumeBinding
    args:
      shape: [{utilization: 50, score: 3}]
`},
	{name: "volume binding shape score 11", file: `
profiles:
- pluginConfig:
  - name: VolumeBinding
    args:
      shape: [{utilization: 0, score: 10}, {utilization: 100, score: 11}]
`, refused: "profiles[0].pluginConfig[0].args.shape[1].score", kubeSays: "shape[1].score"},
	{name: "volume binding shape unsorted", file: `
profiles:
- pluginConfig:
  - name: VolumeBinding
    args:
      shape: [{utilization: 100, score: 0}, {utilization: 0, score: 10}]
`, refused: "profiles[0].pluginConfig[0].args.shape[1].utilization", kubeSays: "shape[1].utilization"},
	{name: "dynamic resources negative filter timeout", file: `
profiles:
- pluginConfig:
  - name: DynamicResources
    args: {filterTimeout: -1s}
`, refused: "profiles[0].pluginConfig[0].args.filterTimeout"},
	{name: "dynamic resources short binding timeout", file: `
profiles:
- pluginConfig:
  - name: DynamicResources
    args: {bindingTimeout: 500ms}
`, refused: "profiles[0].pluginConfig[0].args.bindingTimeout"},
	{name: "default preemption percentage 101", file: `
profiles:
- pluginConfig:
  - name: DefaultPreemption
    args: {minCandidateNodesPercentage: 101}
`, refused: "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage"},
	{name: "default preemption absolute negative", file: `
profiles:
- pluginConfig:
  - name: DefaultPreemption
    args: {minCandidateNodesAbsolute: -1}
`, refused: "profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute"},
	{name: "default preemption both zero", file: `
profiles:
- pluginConfig:
  - name: DefaultPreemption
    args: {minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}
`, refused: "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage"},

	{name: "score at a non-score plugin", file: `
profiles:
- plugins:
    score:
      enabled: [{name: NodePorts, weight: 2}]
`, refused: "profiles[0].plugins.score.enabled[0].name", kubeSays: `plugin "NodePorts" does not extend ScorePlugin`},
	{name: "two queue sorts", file: `
profiles:
- plugins:
    queueSort:
      enabled: [{name: PrioritySort}, {name: PrioritySort}]
`, refused: "profiles[0].plugins.queueSort.enabled[1].name", kubeSays: "queueSort"},
	{name: "profile percentage negative", file: "profiles:\n- percentageOfNodesToScore: -1\n", refused: "profiles[0].percentageOfNodesToScore"},
	{name: "initial backoff negative", file: "podInitialBackoffSeconds: -3\n", refused: "podInitialBackoffSeconds"},
	{name: "max backoff 0", file: "podMaxBackoffSeconds: 0\n", refused: "podMaxBackoffSeconds"},
	{name: "default preemption args while disabled", file: `
profiles:
- plugins:
    multiPoint:
      disabled: [{name: DefaultPreemption}]
  pluginConfig:
  - name: DefaultPreemption
    args: {minCandidateNodesPercentage: 200}
`, refused: "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage"},
	{name: "args of another version", file: `
profiles:
- pluginConfig:
  - name: InterPodAffinity
    args: {apiVersion: kubescheduler.config.k8s.io/v1beta3, kind: InterPodAffinityArgs}
`, refused: "profiles[0].pluginConfig[0].args.apiVersion", kubeSays: "v1beta3"},
	{name: "args not an object", file: `
profiles:
- pluginConfig:
  - name: InterPodAffinity
    args: [1]
`, refused: "profiles[0].pluginConfig[0].args", kubeSays: "InterPodAffinity"},

	// Refused by yardmaster on purpose (docs/configuration.md).
	{name: "extender negative timeout", file: "extenders:\n- {urlPrefix: http://127.0.0.1:1, httpTimeout: -1s}\n", refused: "extenders[0].httpTimeout", deliberate: "a negative timeout fails every call"},
	{name: "gang scheduling", file: `
profiles:
- plugins:
    multiPoint:
      enabled: [{name: GangScheduling}]
`},
	{name: "gang scheduling disabled", file: `
profiles:
- plugins:
    multiPoint:
      disabled: [{name: GangScheduling}]
`},
	{name: "deferred pod scheduling", file: `
profiles:
- plugins:
    multiPoint:
      enabled: [{name: DeferredPodScheduling}]
`, refused: "profiles[0].plugins.multiPoint.enabled[0].name", deliberate: "resize-deferred pods are not scheduled (kube-scheduler's plugin does nothing unless an alpha gate is on)"},
	{name: "deferred pod scheduling disabled", file: `
profiles:
- plugins:
    filter:
      disabled: [{name: DeferredPodScheduling}]
`},
	{name: "content type", file: "clientConnection: {contentType: application/yaml}\n", refused: "clientConnection.contentType", deliberate: "yardmaster's clients speak protobuf or JSON"},
	{name: "lease name from a profile name", file: "profiles:\n- schedulerName: Not_A_Lease\n", refused: "leaderElection.resourceName", deliberate: "the default lease name is the first profile's name, and must be a valid name"},
	{name: "renew deadline within jitter of retry", file: "leaderElection: {leaseDuration: 15s, renewDeadline: 2s, retryPeriod: 2s}\n", refused: "leaderElection.renewDeadline", deliberate: "client-go's leader elector refuses it once kube-scheduler starts"},
	{name: "negative weight of the last score plugin", file: `
profiles:
- plugins:
    multiPoint:
      disabled: [{name: "*"}]
      enabled: [{name: PrioritySort}, {name: DefaultBinder}, {name: NodeName}, {name: ImageLocality, weight: -1}]
`, refused: "profiles[0].plugins.multiPoint.enabled[3].weight", deliberate: "a negative weight is refused wherever it is"},
	{name: "backoff beyond a duration", file: "podMaxBackoffSeconds: 10000000000\n", refused: "podMaxBackoffSeconds", deliberate: "kube-scheduler's backoff overflows"},
	{name: "lease namespace", file: "leaderElection: {resourceNamespace: Not_A_Namespace}\n", refused: "leaderElection.resourceNamespace", deliberate: "the API server would refuse every Lease request"},
	{name: "placement plugin", file: `
profiles:
- plugins:
    placementGenerate:
      enabled: [{name: TopologyPlacement}]
`, refused: "profiles[0].plugins.placementGenerate.enabled[0].name", kubeSays: `"TopologyPlacement" does not exist`},
	{name: "extender without settings", file: "extenders: [{}]\n", refused: "extenders[0].urlPrefix", deliberate: "an extender without a URL can never be called"},
	{name: "placementScore", file: `
profiles:
- plugins:
    placementScore:
      enabled: [{name: PodGroupPodsCount}]
`, refused: "profiles[0].plugins.placementScore.enabled[0].name", deliberate: "pod-group scheduling is not implemented"},
	{name: "DefaultPreemption at podGroupPostFilter", file: `
profiles:
- plugins:
    podGroupPostFilter:
      enabled: [{name: DefaultPreemption}]
`, refused: "profiles[0].plugins.podGroupPostFilter.enabled[0].name", deliberate: "pod-group scheduling is not implemented"},
	{name: "NodeResourcesFit at placementScore", file: `
profiles:
- plugins:
    placementScore:
      enabled: [{name: NodeResourcesFit}]
`, refused: "profiles[0].plugins.placementScore.enabled[0].name", deliberate: "pod-group scheduling is not implemented"},
	{name: "yardmaster's own plugin", file: `
profiles:
- plugins:
    multiPoint:
      enabled: [{name: NetworkTraffic}]
  pluginConfig:
  - name: NetworkTraffic
    args: {prometheusAddress: "http://127.0.0.1:1"}
`, refused: "profiles[0].plugins.multiPoint.enabled[0].name", kubeSays: `"NetworkTraffic" does not exist`, kubeOnly: "a plugin of yardmaster's that kube-scheduler does not have"},
	{name: "bad args of yardmaster's own plugin, not enabled", file: `
profiles:
- pluginConfig:
  - name: Explain
    args: {simulatorAnnotation: true}
`, refused: "profiles[0].pluginConfig[0].args.simulatorAnnotation", deliberate: "the args of yardmaster's own plugins are checked whenever given (Explain is configured by pluginConfig alone)"},
}
