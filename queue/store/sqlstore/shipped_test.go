package sqlstore_test

import (
	"testing"

	"github.com/nowserving/nowserving/queue/store/mysql"
	"github.com/nowserving/nowserving/queue/store/postgres"
	"github.com/nowserving/nowserving/queue/store/sqlite"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// shipped is, per dialect and version, the name a migration is recorded
// under in schema_migrations and the digest of the statements it runs
// (sqlstore.Checksum: white space folded), as the releases that applied
// them on sites ran them. Migrate skips a version it finds recorded, by
// number, and compares the checksum recorded with it to this digest,
// refusing to run when they differ: a site migrated by an older release
// keeps the schema these statements made, so a new database must get the
// very same. Moving a migration to the portable ones, or filling it from
// Words, must leave its row here as it is; a new migration adds a row.
var shipped = map[string][]struct{ name, digest string }{
	"sqlite": {
		{"0001_init.sql", "3e09224ebad6de67ee1d5bd57aacf5890f5665444e9a60f92246722f091a59da"},
		{"0002_event_call_count.sql", "a4ec2729ee63f4489b807fb10f6e5cdb65fa9c90e27e6996f0e73b994753f6cf"},
		{"0003_target_index.sql", "594d0495c49448c73798cda0b653d0641a4fd8346985eae2c278444806abb2a8"},
		{"0004_health.sql", "6048b7456915da389f52c6a62dcc0a75b4fd56ebe51ff0912e49c21e4af04980"},
		{"0005_event_context.sql", "a2e0ff46557eb9085c38397509fc235f08b2d4580d2a087d7702c384588e0979"},
		{"0006_appointments.sql", "ccefb2034c579a2811cdf67ea6a34ecfba254680bc84c9283699343c5c7a87ae"},
		{"0007_outbox.sql", "073938515613a7f979f56a9980039dea2a4d52920774bdad1053f916140cdb70"},
		{"0008_retention.sql", "3ac4d00f1a155aecb38775385b4fc67d384e7c21568298a35d742dc2bc6d148b"},
		{"0009_lost_work.sql", "e15015032888119eaba4165b481880e941c268448b610881bef6404ea2108c9c"},
		{"0010_accounts.sql", "c31b96a67decd4887ce77859e170ec7a507058516926ca0769b1494259a0d377"},
		{"0011_daily_figures.sql", "3689d886372f57f328db72101f8fd373b46e39b2244c867374e7422b46340d30"},
	},
	"postgres": {
		{"0001_init.sql", "71cba4df2195650f45bbe208275f9c51019b504ac808df1658a15206752276ca"},
		{"0002_event_call_count.sql", "a4ec2729ee63f4489b807fb10f6e5cdb65fa9c90e27e6996f0e73b994753f6cf"},
		{"0003_target_index.sql", "594d0495c49448c73798cda0b653d0641a4fd8346985eae2c278444806abb2a8"},
		{"0004_health.sql", "0ac23822234daed49608b6fc920c5d9a8c9bde626e46f6540bdfb43212e6e26b"},
		{"0005_event_context.sql", "a2e0ff46557eb9085c38397509fc235f08b2d4580d2a087d7702c384588e0979"},
		{"0006_appointments.sql", "6134280131e7daabd4833bf74693a4a25a6ab3b2620ca62004c83ecc02426eb2"},
		{"0007_outbox.sql", "17b779c1df0416740fecf693b80ebdc122a13de68e7166274c51cf20483bac07"},
		{"0008_retention.sql", "1789e13b05e83d034cc454ca7b5352efe7d7cd2bdbf1b0bbfd4b6961f42cf939"},
		{"0009_lost_work.sql", "0fe8641dbe72a085995eaa901dd2a82bc552c687ca18375179449e823b371873"},
		{"0010_accounts.sql", "a1350768fc53b50a1df5647046a828cf545db414014dcd8f4ca12291c3549efd"},
		{"0011_daily_figures.sql", "5e8080f41a7b83c7aec20f2d9eba642e48536981fa7ea1ea7bd575c27f59c7d8"},
	},
	"mysql": {
		{"0001_init.sql", "617c01655fa7d8fe661a96ede255555921e5d512c1c067d575bb8bba643c14e2"},
		{"0002_event_call_count.sql", "bac2073fcee2eb68c19ad18d9e35d44255496dc36db0f2f624784d51ceb82f26"},
		{"0003_target_index.sql", "aad11fbb9c861258dfbc94c06a4c66cfbadc45a47466abff1c81e3dd6bea4a4d"},
		{"0004_health.sql", "530251b0bbea5dac09468fba7922788f5a3cae695c440a8a1491119d47aeea07"},
		{"0005_event_context.sql", "34a7aaacaecf2f493a24dbc255d2cfb420854cbea9103ac5a18d483a3b45891a"},
		{"0006_appointments.sql", "b46bff531314ca9f51a2021f6657cb4fb1dd6a7a7adcab2e2a4f651b003efd0a"},
		{"0007_outbox.sql", "0fa5f59818db8012ed3d36cd735a2f522f9b42a3f5f04e959aa5f36063103abb"},
		{"0008_retention.sql", "543b7d76218addcefac90091ae2558f35fcf233e0880b86a16dab3355d40bd1d"},
		{"0009_lost_work.sql", "93f2c6d3bf89122ced73c9c699577336cc0f2747f3bfd8a752445e6eb326c508"},
		{"0010_accounts.sql", "d8def209d55ee429fc3e217a52ec44d43dc72caa3bb28ea21f45907f21f50cf5"},
		{"0011_daily_figures.sql", "14c3d2434c1edaac4dda5a3d281ef1a4a402c9a682106ad2fa7bb4ad4040b115"},
	},
}

// TestShippedMigrations: every dialect still runs, under the same version
// and name, the statements its released migrations ran.
func TestShippedMigrations(t *testing.T) {
	for _, d := range []*sqlstore.Dialect{sqlite.Dialect(), postgres.Dialect(), mysql.Dialect()} {
		ms, err := d.Schema()
		if err != nil {
			t.Fatal(err)
		}
		want := shipped[d.Name]
		if len(ms) < len(want) {
			t.Fatalf("%s: %d migrations, %d shipped", d.Name, len(ms), len(want))
		}
		for i, w := range want {
			m := ms[i]
			if m.Version != i+1 || m.Name != w.name {
				t.Errorf("%s: migration %d is %d %s, shipped as %d %s", d.Name, i, m.Version, m.Name, i+1, w.name)
			}
			if got := sqlstore.Checksum(m.SQL); got != w.digest {
				t.Errorf("%s: %s runs other statements than it shipped with: digest %s, want %s", d.Name, m.Name, got, w.digest)
			}
		}
	}
}
