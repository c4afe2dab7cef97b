package framework

import (
	"encoding/binary"
	"slices"

	v1 "k8s.io/api/core/v1"
)

// Helpers for PodSigner.SignPod. Every fragment is length-prefixed or of a
// fixed width, so that two different sequences of fragments never encode
// to the same bytes.

// SignSpec appends the protobuf encoding of spec, a PodSpec holding only
// the fields a plugin reads (the generated encoding is deterministic: map
// keys are sorted).
func SignSpec(sig []byte, spec *v1.PodSpec) ([]byte, bool) {
	n := spec.Size()
	sig = binary.AppendUvarint(sig, uint64(n))
	sig = slices.Grow(sig, n)
	if _, err := spec.MarshalToSizedBuffer(sig[len(sig) : len(sig)+n]); err != nil {
		return sig, false
	}
	return sig[:len(sig)+n], true
}

// SignInts appends vs, count first.
func SignInts(sig []byte, vs ...int64) []byte {
	sig = binary.AppendUvarint(sig, uint64(len(vs)))
	for _, v := range vs {
		sig = binary.AppendVarint(sig, v)
	}
	return sig
}

// SignString appends s, length first.
func SignString(sig []byte, s string) []byte {
	sig = binary.AppendUvarint(sig, uint64(len(s)))
	return append(sig, s...)
}

// SignTolerations appends the pod's tolerations.
func SignTolerations(sig []byte, pod *v1.Pod) ([]byte, bool) {
	return SignSpec(sig, &v1.PodSpec{Tolerations: pod.Spec.Tolerations})
}
