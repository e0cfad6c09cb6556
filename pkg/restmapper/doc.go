// Package restmapper builds the REST mappers of the clusters the
// controllers talk to: controller-runtime's dynamic mapper, which discovers
// a group version on first use, with the mappings it found remembered, so
// the scope lookup of every cached read and every owner event costs a map
// read instead of a walk over every group version's mapper.
package restmapper
