package config_test

import (
	"fmt"

	"github.com/nowserving/nowserving/config"
)

func Example() {
	cfg, err := config.Load(config.Opts{
		File: "../testdata/hospital.yaml",
		// Pin the variables *_env keys name, so the example prints the same
		// everywhere (NOWSERVING_* overrides come from the process environment).
		LookupEnv: func(string) (string, bool) { return "", false },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Store.Driver, cfg.Store.DSN)
	site, _ := cfg.Site("hospital")
	fmt.Println(site.ID, site.Name.Pick("en"), site.Location(), "rollover", site.Rollover)
	for _, s := range site.Services {
		fmt.Printf("%s %-11s prefix %s width %d avg %s\n", s.Code, s.Name.Pick("en"), s.Prefix, s.Width, s.AvgService)
	}
	c3, _ := site.Counter("3")
	fmt.Println("counter 3:", c3.Policy, c3.Services)
	// Output:
	// sqlite nowserving-demo.db
	// hospital City Hospital Asia/Shanghai rollover 04:00
	// A First visit prefix A width 3 avg 6m0s
	// R Revisit     prefix R width 3 avg 4m0s
	// E Emergency   prefix E width 3 avg 10m0s
	// counter 3: weighted [{R 2} {A 1}]
}

func ExampleLoad_errors() {
	_, err := config.Load(config.Opts{
		File:      "testdata/bad/width.yaml",
		LookupEnv: func(string) (string, bool) { return "", false },
	})
	fmt.Println(err)
	// Output:
	// config: testdata/bad/width.yaml: 5 problems:
	//	sites[0].services[1].width: must be 1..6, got 9
	//	sites[0].services[2].width: must be 1..6, got 0
	//	sites[0].services[3].daily_cap: 500 does not fit width 2 (at most 99)
	//	sites[0].services[4].code: must be 1 to 8 uppercase letters or digits, got "e1"
	//	sites[0].services[4].prefix: must be 0 to 4 uppercase letters or digits, got "lower"
}
