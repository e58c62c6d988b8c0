module syq

go 1.26.8

require (
	github.com/klauspost/compress v1.20.4
	github.com/spf13/pflag v1.1.0
	golang.org/x/sys v0.50.0
)
