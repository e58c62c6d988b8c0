module syq

go 1.26.8

require (
	github.com/klauspost/compress v1.20.4
	github.com/spf13/pflag v1.1.0
	github.com/zeebo/xxh3 v1.1.0
	golang.org/x/net v0.62.0
	golang.org/x/sys v0.50.0
)

require (
	github.com/klauspost/cpuid/v2 v2.2.10 // indirect
	golang.org/x/text v0.43.0 // indirect
)
