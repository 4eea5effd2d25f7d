package web

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestBrowserAdmin drives the admin page in headless Chromium: an admin
// adds an account (a name already taken is refused in place), changes its
// password, its counters and disables it, by the page's forms and
// dialogs; their own account offers neither Disable nor another role; a
// counter clerk is refused the page. Screenshots at 1920×1080
// and 390×844 in en, zh and pt, checked for AA contrast and, on the
// phone, for nothing wider than the screen.
func TestBrowserAdmin(t *testing.T) {
	b := startBrowser(t)
	se := newStaffEnv(t, counterSite)
	se.addAdmin(t)
	msg := "document.getElementById('message').textContent"
	p := b.clerk(t, se, "root", "", 1366, 768)
	b.waitFor(t, p, "document.getElementById('admin-link').hidden", "false", 10*time.Second)
	b.eval(p, "document.getElementById('admin-link').click()")
	b.waitFor(t, p, "location.pathname", "/admin", 10*time.Second)
	b.waitFor(t, p, "document.body.dataset.accounts", "4", 10*time.Second)

	// Add by the form, with the keyboard: a name taken first.
	fill := func(name string) {
		t.Helper()
		b.eval(p, "['add-name', 'add-password', 'add-counters'].forEach(function (id) { document.getElementById(id).value = '' }); document.getElementById('add-name').focus()")
		b.typeText(t, p, name)
		b.press(t, p, "Tab")
		b.typeText(t, p, "zhou-pass-1")
		b.eval(p, "document.getElementById('add-role').value = 'counter'; document.getElementById('add-counters').focus()")
		b.typeText(t, p, "7, 8")
		b.eval(p, "document.getElementById('add-go').focus()")
		b.press(t, p, "Enter")
	}
	fill("li.na")
	b.waitFor(t, p, msg, "An account of that name exists already.", 10*time.Second)
	b.waitFor(t, p, "document.getElementById('message').getAttribute('role')", "alert", time.Second)
	fill("zhou")
	b.waitFor(t, p, msg, "Account zhou added.", 10*time.Second)
	b.waitFor(t, p, "document.body.dataset.accounts", "5", 5*time.Second)
	row := "document.querySelector('tr[data-name=zhou]').textContent"
	b.waitFor(t, p, row+".indexOf('7, 8') >= 0", "true", 5*time.Second)
	// A counter that does not exist is refused with the server's reason,
	// which names the counters there are.
	b.eval(p, "document.getElementById('ac-zhou').click()")
	b.waitFor(t, p, "document.getElementById('d-access').open", "true", 5*time.Second)
	b.eval(p, "document.getElementById('access-counters').value = '99'; document.getElementById('da-ok').click()")
	b.waitFor(t, p, msg, `Not accepted: counter "99": no such counter at the account's sites (counters at main: 5, 6, 7, 8)`, 10*time.Second)
	b.eval(p, "document.getElementById('ac-zhou').click()")
	b.eval(p, "document.getElementById('access-counters').value = '5'; document.getElementById('da-ok').click()")
	b.waitFor(t, p, msg, "Access of zhou changed.", 10*time.Second)
	b.waitFor(t, p, "document.querySelector('tr[data-name=zhou] td:nth-child(4)').textContent", "5", 5*time.Second)
	// A password by its dialog: too short, then good.
	b.eval(p, "document.getElementById('pw-zhou').click()")
	b.waitFor(t, p, "document.activeElement.id", "new-password", 5*time.Second)
	b.typeText(t, p, "short")
	b.press(t, p, "Enter")
	b.waitFor(t, p, msg, "The password must be 8 to 256 characters.", 10*time.Second)
	b.eval(p, "document.getElementById('pw-zhou').click()")
	b.waitFor(t, p, "document.activeElement.id", "new-password", 5*time.Second)
	b.typeText(t, p, "zhou-pass-2")
	b.press(t, p, "Enter")
	b.waitFor(t, p, msg, "Password of zhou changed; their sessions ended.", 10*time.Second)
	if r := se.person(t).login("zhou", "zhou-pass-2"); r.StatusCode != 303 {
		t.Fatalf("zhou's new password: %d", r.StatusCode)
	}
	b.eval(p, "document.getElementById('di-zhou').click()")
	b.waitFor(t, p, msg, "zhou disabled; their sessions ended.", 10*time.Second)
	b.waitFor(t, p, "document.querySelector('tr[data-name=zhou] .st').textContent", "disabled", 5*time.Second)
	// Their own account: no Disable button, and its access dialog offers
	// only the admin role (the server refuses both: TestStaffAdmin).
	b.waitFor(t, p, "document.getElementById('di-root') === null && document.getElementById('pw-root') !== null", "true", time.Second)
	b.eval(p, "document.getElementById('ac-root').click()")
	b.waitFor(t, p, "Array.from(document.getElementById('access-role').options).map(function (o) { return o.value }).join()", "admin", 5*time.Second)
	b.eval(p, "document.getElementById('d-access').close(); document.getElementById('ac-zhou').click()")
	b.waitFor(t, p, "Array.from(document.getElementById('access-role').options).map(function (o) { return o.value }).join()", "counter,supervisor,admin", 5*time.Second)
	b.eval(p, "document.getElementById('d-access').close()")

	dir := artifacts(t)
	for _, size := range [][2]int{{1920, 1080}, {390, 844}} {
		for _, lang := range []string{"en", "zh", "pt"} {
			s := b.window(t, se.http.URL+"/login", size[0], size[1])
			b.loginByKeys(t, s, "root", "secret-pass")
			b.waitFor(t, s, "location.pathname", "/counter", 10*time.Second)
			b.navigate(t, s, se.http.URL+"/admin?lang="+lang)
			b.waitFor(t, s, "document.body.dataset.accounts", "5", 10*time.Second)
			b.checkShot(t, s, filepath.Join(dir, fmt.Sprintf("admin-%dx%d-%s.png", size[0], size[1], lang)), size[0])
		}
	}

	// A clerk is told the page is not theirs.
	c := b.clerk(t, se, "li.na", "", 1280, 800)
	b.waitFor(t, c, "document.getElementById('admin-link').hidden", "true", 5*time.Second)
	b.navigate(t, c, se.http.URL+"/admin")
	b.waitFor(t, c, "document.body.innerText.indexOf('for accounts with the admin role') >= 0", "true", 10*time.Second)
}
