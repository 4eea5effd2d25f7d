package web

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/staff"
)

// The admin page /admin: the staff accounts, for a person with the admin
// role, as `nowserving user` manages them: list, add, change a password,
// change the role, sites and counters, disable and enable. Its JSON calls
// under /admin/api/ go through staffSession (session cookie, CSRF token,
// same origin) and then adminOnly; like the counter page's, they are for
// the browser, not in openapi.yaml. Every change is logged with the admin
// who made it (never a password).

func (s *Server) adminRoutes() []route {
	return []route{
		{"GET", "/admin", s.adminPage},
		{"GET", "/admin/api/accounts", s.staffSession(s.adminOnly(s.adminList))},
		{"POST", "/admin/api/accounts", s.staffSession(s.adminOnly(s.adminCreate))},
		{"POST", "/admin/api/accounts/{name}/{action}", s.staffSession(s.adminOnly(s.adminChange))},
	}
}

// adminOnly lets through a session of the admin role; others get 403
// forbidden_role, logged.
func (s *Server) adminOnly(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if ss := sessionOf(r); ss.Role != queue.RoleAdmin {
			s.log.Warn("web: admin page refused to a person without the admin role", "user", ss.Name, "role", ss.Role, "path", r.URL.Path)
			writeProblem(w, http.StatusForbidden, "forbidden_role", "admins only", ss.Name+" is not an admin")
			return
		}
		next(w, r)
	}
}

// adminPage serves the admin page to an admin, sends a person without a
// session to /login, and tells anyone else it is not for them.
func (s *Server) adminPage(w http.ResponseWriter, r *http.Request) {
	ss := s.pagePerson(w, r)
	if ss == nil {
		return
	}
	if ss.Role != queue.RoleAdmin {
		s.log.Warn("web: admin page refused to a person without the admin role", "user", ss.Name, "role", ss.Role)
		pageHeaders(w)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintln(w, "The admin page is for accounts with the admin role; "+ss.Name+" has the "+string(ss.Role)+" role.")
		return
	}
	s.staffPage(w, "static/admin.html", nil)
}

// AdminAccount is an account as the admin page lists it (never its hash).
type AdminAccount struct {
	Name     string    `json:"name"`
	Role     string    `json:"role"`
	Sites    []string  `json:"sites"`
	Counters []string  `json:"counters"`
	Disabled bool      `json:"disabled"`
	Updated  time.Time `json:"updated"`
}

// AdminList is the admin page's picture: the accounts, and the sites and
// counters an account can be given.
type AdminList struct {
	Me       string         `json:"me"`
	CSRF     string         `json:"csrf"`
	Accounts []AdminAccount `json:"accounts"`
	Sites    []AdminSite    `json:"sites"`
}

// AdminSite is a configured site and its counters' ids.
type AdminSite struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Counters []string `json:"counters"`
}

func (s *Server) adminList(w http.ResponseWriter, r *http.Request) {
	ss := sessionOf(r)
	as, err := s.o.Staff.List(r.Context())
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	out := AdminList{Me: ss.Name, CSRF: ss.CSRF, Accounts: []AdminAccount{}, Sites: []AdminSite{}}
	for _, a := range as {
		out.Accounts = append(out.Accounts, AdminAccount{Name: a.Name, Role: string(a.Role), Sites: nonNil(a.Sites),
			Counters: nonNil(a.Counters), Disabled: a.Disabled, Updated: a.Updated})
	}
	for _, site := range s.o.Engine.Sites() {
		as := AdminSite{ID: site.ID, Name: site.Name(""), Counters: []string{}}
		for _, c := range site.Counters {
			as.Counters = append(as.Counters, c.ID)
		}
		out.Sites = append(out.Sites, as)
	}
	writeJSON(w, http.StatusOK, out)
}

func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// AdminBody is the body of an admin call: the fields its action takes
// (create: all but none required beyond name, password and role;
// password: password; access: role, sites, counters; disable, enable:
// none).
type AdminBody struct {
	Name     string   `json:"name,omitempty"`
	Password string   `json:"password,omitempty"`
	Role     string   `json:"role,omitempty"`
	Sites    []string `json:"sites,omitempty"`
	Counters []string `json:"counters,omitempty"`
}

// adminBody decodes the body; on a bad one it answers 400 and returns false.
func adminBody(w http.ResponseWriter, r *http.Request) (AdminBody, bool) {
	var b AdminBody
	ok := readBody(w, r, &b, "a JSON object with name, password, role, sites, counters (as the action takes them)")
	return b, ok
}

// checkAccess checks an account's access before the store sees it.
func (s *Server) checkAccess(a queue.Account) error {
	if err := staff.CheckAccount(a); err != nil {
		return err
	}
	return staff.CheckPlaces(s.o.Engine.Sites(), a.Sites, a.Counters)
}

func (s *Server) adminCreate(w http.ResponseWriter, r *http.Request) {
	b, ok := adminBody(w, r)
	if !ok {
		return
	}
	a := queue.Account{Name: b.Name, Role: queue.Role(b.Role), Sites: b.Sites, Counters: b.Counters}
	if err := s.checkAccess(a); err != nil {
		badRequest(w, staffDetail(err))
		return
	}
	if err := s.o.Staff.Create(r.Context(), a, b.Password); err != nil {
		s.adminError(w, err)
		return
	}
	s.log.Info("web: account created", "by", sessionOf(r).Name, "name", a.Name, "role", a.Role)
	writeJSON(w, http.StatusCreated, map[string]string{"name": a.Name})
}

// adminChange runs one change of the path's account.
func (s *Server) adminChange(w http.ResponseWriter, r *http.Request) {
	name, action, by := r.PathValue("name"), r.PathValue("action"), sessionOf(r).Name
	if err := staff.CheckName(name); err != nil {
		badRequest(w, staffDetail(err))
		return
	}
	b, ok := adminBody(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	var err error
	switch action {
	case "password":
		if b.Name != "" || b.Role != "" || b.Sites != nil || b.Counters != nil {
			badRequest(w, "password takes only password")
			return
		}
		err = s.o.Staff.ChangePassword(ctx, name, b.Password)
	case "access":
		if b.Name != "" || b.Password != "" {
			badRequest(w, "access takes role, sites and counters")
			return
		}
		if err := s.checkAccess(queue.Account{Name: name, Role: queue.Role(b.Role), Sites: b.Sites, Counters: b.Counters}); err != nil {
			badRequest(w, staffDetail(err))
			return
		}
		err = s.o.Staff.ChangeAccess(ctx, by, name, queue.Role(b.Role), b.Sites, b.Counters)
	case "disable", "enable":
		if b.Name != "" || b.Password != "" || b.Role != "" || b.Sites != nil || b.Counters != nil {
			badRequest(w, action+" takes nothing")
			return
		}
		err = s.o.Staff.ChangeDisabled(ctx, by, name, action == "disable")
	default:
		writeProblem(w, http.StatusNotFound, "unknown_action", "unknown action", "want password, access, disable or enable")
		return
	}
	if err != nil {
		s.adminError(w, err)
		return
	}
	s.log.Info("web: account changed", "by", by, "name", name, "change", action, "role", b.Role)
	writeJSON(w, http.StatusOK, map[string]string{"name": name, "change": action})
}

// adminError answers the account errors as problems.
// staffDetail is a staff refusal as a problem's detail, for the person at
// the admin page: without the package's "staff: " prefix.
func staffDetail(err error) string { return strings.TrimPrefix(err.Error(), "staff: ") }

func (s *Server) adminError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, staff.ErrBadPassword):
		writeProblem(w, http.StatusBadRequest, "bad_password", "password not accepted", "a password is 8 to 256 bytes")
	case errors.Is(err, queue.ErrAccountExists):
		writeProblem(w, http.StatusConflict, "account_exists", "account exists", "an account of that name exists")
	case errors.Is(err, queue.ErrUnknownAccount):
		writeProblem(w, http.StatusNotFound, "unknown_account", "no such account", "")
	case errors.Is(err, staff.ErrSelf):
		writeProblem(w, http.StatusConflict, "self", "not for your own account", staffDetail(err))
	default:
		writeError(w, s.log, err)
	}
}
