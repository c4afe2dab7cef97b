// Package volumes holds the four volume plugins of kube-scheduler v1.37,
// a family on one data source: the PersistentVolumeClaims,
// PersistentVolumes, StorageClasses, CSINodes, CSIDrivers and
// CSIStorageCapacities of the cluster, read through the handle's
// informers (claims.go); their queueing hints are in hints.go.
//
//	VolumeRestrictions  (Restrictions, restrictions.go) a ReadWriteOncePod
//	                    claim in use, an inline disk mounted elsewhere
//	NodeVolumeLimits    (NodeLimits, limits.go) CSI attach limits per node
//	VolumeBinding       (Binding, binding*.go) bound volumes' node affinity,
//	                    volumes to bind or provision for unbound claims;
//	                    scores by storage room, reserves and binds them
//	                    (args: BindingArgs)
//	VolumeZone          (Zone, zone.go) bound volumes' zone and region labels
//
// Like every filter, they look up the pod's claims once in PreFilter;
// Filter reads only the cycle state and one NodeInfo.
package volumes
