// Package hll counts distinct items approximately with HyperLogLog sketches.
// A sketch stays small while few items went in and merges with any other,
// so unique visitors stored per hour can be added up over any range of hours
// without keeping the visitors.
//
// Callers insert 64-bit hashes, not items. The hashes must be well mixed
// (every bit equally likely 0 or 1, independently) and stable: a stored
// sketch is merged with sketches made by other processes and other releases,
// so a per-process seed such as hash/maphash's would count one visitor once
// per process. A good 64-bit hash of the visitor key (xxh3, wyhash, the first
// 8 bytes of SHA-256) can go in as is; a weak one (FNV, a CRC) or a plain ID
// must be passed through [Mix64] first, or the estimate can be far off.
//
// Precision. A dense sketch has 2^16 registers (values 0 to 49). Its
// relative standard error is 1.04/√65536, about 0.41%, and the product
// asks for every unique-visitor count from 100 to 10 million to be within
// 2%: that is 4.9 standard errors, which an estimate misses about once in
// a million. 2^14 registers (0.81%) miss 2% once in 70 estimates and 2^15
// (0.57%) once in 2,000, too often for a promise about every count; each
// step doubles the bytes to divide the error by only √2, so 2^16 is the
// smallest precision that meets it. The price is in the larger sketches:
// a dense one takes 32 KiB stored (32,774 bytes and a few dozen), 64 KiB
// in memory, and 4 to 5 times the time to merge or estimate of 2^14
// registers, and one of 3,800 to 16,500 items, dense in 8 KiB at 2^14,
// stays sparse in 8 to 32 KiB. Sketches of fewer items, most of those
// stored, take a little more than at 2^14 (2% at 3 items, 7% at 20, 12%
// at 3,000), for the longer sparse index below.
//
// Sparse first. Most (path, hour) pairs see a few visitors, so a sketch
// starts as a sorted list of the hashes' top 26 bits (plus the rank of the
// rest for the 1 in 1,024 entries whose bits 17 to 26 are zero): what a
// sketch of 2^26 registers would hold. Counting its occupied buckets
// (linear counting over 2^26) is exact but for an item or so at the sizes
// where the list is used, and the list converts losslessly to the 2^16
// registers, since each entry holds a register's index and the 10 hash
// bits after it. 26 bits is as many as an entry of 32 bits holds next to
// its rank; fewer would make entries a little shorter (25 bits: up to a
// tenth fewer bytes) but double the items that share an index. A sketch
// turns dense as soon as its encoded list would be longer than the encoded
// registers (about 16,500 items, at about 2 bytes an item), so a stored
// sketch is the smaller of the two.
//
// Estimator. Dense registers are read with Ertl's improved estimator ("New
// cardinality estimation algorithms for HyperLogLog sketches", 2017). It is
// nearly unbiased over the whole range from the register histogram alone:
// there is no switch between linear counting and the raw estimate (whose
// threshold is where plain HyperLogLog is worst) and no empirical bias table
// (HyperLogLog++ needs one per precision, measured by simulation, which this
// package would have to generate and then trust).
//
// A Sketch is not safe for concurrent use: even Estimate and AppendBinary
// reorganize its buffers.
package hll
