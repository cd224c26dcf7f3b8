// Renders a Helm chart's templates as Helm v3 does, with Helm's own template machinery: Go's
// text/template, Sprig v3 (Helm's function library) and sigs.k8s.io/yaml (Helm's toYaml/fromYaml).
// No Helm binary can be installed where the project's tests run; this harness stands in for
// `helm template` so the chart is rendered by the real engine pieces, not by a look-alike.
//
// It mirrors, from helm/helm (v3, helm.sh/helm/v3):
//   - pkg/engine/funcs.go (commit 02ce01b2415fe270a760c984f2e0158b18476573): funcMap =
//     sprig.TxtFuncMap() without env/expandenv, plus toYaml, fromYaml, toJson, fromJson,
//     include, tpl, required (toToml is left out: BurntSushi/toml is not needed by the chart).
//   - pkg/engine/engine.go (commit 0052fe642c606b6020280d81fe7bf4f5d32b849a, and its later
//     includeFun/tplFun/fail form): "missingkey=zero", templates parsed in byPathLen order,
//     partials (`_*`) not rendered, `.Template.Name/BasePath` set per file, "<no value>" removed,
//     `required`/`fail` errors wrapped as HELM_ERR_START…HELM_ERR_END and reported as
//     "execution error at (file:line:col): message", `include` with its recursion bound,
//     getHostByName disabled (EnableDNS off).
//   - pkg/chartutil/coalesce.go (commit 018982f177fcc123877307d9cadce3d2e361db0c): user values
//     coalesced over the chart's values.yaml (maps merged, scalars and lists replaced, null deletes).
//   - pkg/chartutil/values.go ToRenderValues: .Values, .Chart (Chart.yaml's fields), .Release
//     (Name, Namespace, IsInstall, IsUpgrade, Revision, Service "Helm"), .Capabilities (minimal;
//     KubeVersion from --kube-version, default v1.36.0, checked against Chart.yaml's kubeVersion).
//   - pkg/strvals (--set): dotted keys, list indexes, {a,b} lists, backslash escapes, comma-separated
//     pairs, true/false/null/integers typed; and values.schema.json checked as Helm v3 checks it
//     (values.go).
//
// Build (no module proxy; Debian's golang-go, golang-github-masterminds-sprig-dev,
// golang-k8s-sigs-yaml-dev, golang-github-xeipuuv-gojsonschema-dev), in this directory:
// GO111MODULE=off GOPATH=/usr/share/gocode go build -o render .
// Usage: render CHART_DIR [--name NAME] [--namespace NS] [--kube-version V] [-f values.yaml]... [--set k=v]...
// Prints a JSON object: template file name -> rendered text. Errors go to stderr, exit 1.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/semver" // v3 (Debian: golang-github-masterminds-semver-dev, a dependency of Sprig)
	"github.com/Masterminds/sprig"
	"sigs.k8s.io/yaml"
)

const warnStartDelim = "HELM_ERR_START"
const warnEndDelim = "HELM_ERR_END"
const recursionMaxNums = 1000

var warnRegex = regexp.MustCompile(warnStartDelim + `((?s).*)` + warnEndDelim)

func warnWrap(warn string) string { return warnStartDelim + warn + warnEndDelim }

// Metadata is Chart.yaml as helm.sh/helm/v3/pkg/chart.Metadata names its fields in templates.
type Metadata struct {
	Name         string            `json:"name,omitempty"`
	Home         string            `json:"home,omitempty"`
	Sources      []string          `json:"sources,omitempty"`
	Version      string            `json:"version,omitempty"`
	Description  string            `json:"description,omitempty"`
	Keywords     []string          `json:"keywords,omitempty"`
	Icon         string            `json:"icon,omitempty"`
	APIVersion   string            `json:"apiVersion,omitempty"`
	Condition    string            `json:"condition,omitempty"`
	Tags         string            `json:"tags,omitempty"`
	AppVersion   string            `json:"appVersion,omitempty"`
	Deprecated   bool              `json:"deprecated,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	KubeVersion  string            `json:"kubeVersion,omitempty"`
	Type         string            `json:"type,omitempty"`
	Maintainers  []interface{}     `json:"maintainers,omitempty"`
	Dependencies []interface{}     `json:"dependencies,omitempty"`
}

// VersionSet is Capabilities.APIVersions (chartutil.VersionSet).
type VersionSet []string

// Has reports whether an API version (or version/Kind) is served.
func (v VersionSet) Has(apiVersion string) bool {
	for _, x := range v {
		if x == apiVersion {
			return true
		}
	}
	return false
}

type renderable struct {
	tpl      string
	vals     map[string]interface{}
	basePath string
}

func funcMap() template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	extra := template.FuncMap{
		"toYaml":   toYAML,
		"fromYaml": fromYAML,
		"toJson":   toJSON,
		"fromJson": fromJSON,
		"include":  func(string, interface{}) string { return "not implemented" },
		"tpl":      func(string, interface{}) interface{} { return "not implemented" },
		"required": func(string, interface{}) (interface{}, error) { return "not implemented", nil },
	}
	for k, v := range extra {
		f[k] = v
	}
	return f
}

func toYAML(v interface{}) string {
	data, err := yaml.Marshal(v)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(data), "\n")
}

func fromYAML(str string) map[string]interface{} {
	m := map[string]interface{}{}
	if err := yaml.Unmarshal([]byte(str), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func toJSON(v interface{}) string {
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(data)
}

func fromJSON(str string) map[string]interface{} {
	m := make(map[string]interface{})
	if err := json.Unmarshal([]byte(str), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func includeFun(t *template.Template, includedNames map[string]int) func(string, interface{}) (string, error) {
	return func(name string, data interface{}) (string, error) {
		var buf strings.Builder
		if v, ok := includedNames[name]; ok {
			if v > recursionMaxNums {
				return "", fmt.Errorf("rendering template has a nested reference name: %s: unable to execute template", name)
			}
			includedNames[name]++
		} else {
			includedNames[name] = 1
		}
		err := t.ExecuteTemplate(&buf, name, data)
		includedNames[name]--
		return buf.String(), err
	}
}

func tplFun(parent *template.Template, includedNames map[string]int) func(string, interface{}) (string, error) {
	return func(tpl string, vals interface{}) (string, error) {
		t, err := parent.Clone()
		if err != nil {
			return "", fmt.Errorf("cannot clone template: %w", err)
		}
		t.Option("missingkey=zero")
		t.Funcs(template.FuncMap{"include": includeFun(t, includedNames), "tpl": tplFun(t, includedNames)})
		t, err = t.New(parent.Name()).Parse(tpl)
		if err != nil {
			return "", fmt.Errorf("cannot parse template %q: %w", tpl, err)
		}
		var buf strings.Builder
		if err := t.Execute(&buf, vals); err != nil {
			return "", fmt.Errorf("error during tpl function execution for %q: %w", tpl, err)
		}
		return strings.ReplaceAll(buf.String(), "<no value>", ""), nil
	}
}

func initFunMap(t *template.Template) {
	f := funcMap()
	includedNames := make(map[string]int)
	f["include"] = includeFun(t, includedNames)
	f["tpl"] = tplFun(t, includedNames)
	f["required"] = func(warn string, val interface{}) (interface{}, error) {
		if val == nil {
			return val, errors.New(warnWrap(warn))
		} else if s, ok := val.(string); ok && s == "" {
			return val, errors.New(warnWrap(warn))
		}
		return val, nil
	}
	f["fail"] = func(msg string) (string, error) { return "", errors.New(warnWrap(msg)) }
	f["getHostByName"] = func(string) string { return "" }
	t.Funcs(f)
}

type byPathLen []string

func (p byPathLen) Len() int      { return len(p) }
func (p byPathLen) Swap(i, j int) { p[j], p[i] = p[i], p[j] }
func (p byPathLen) Less(i, j int) bool {
	a, b := p[i], p[j]
	ca, cb := strings.Count(a, "/"), strings.Count(b, "/")
	if ca == cb {
		return strings.Compare(a, b) == -1
	}
	return ca < cb
}

func sortTemplates(tpls map[string]renderable) []string {
	keys := make([]string, 0, len(tpls))
	for key := range tpls {
		keys = append(keys, key)
	}
	sort.Sort(sort.Reverse(byPathLen(keys)))
	return keys
}

func cleanupParseError(filename string, err error) error {
	tokens := strings.Split(err.Error(), ": ")
	if len(tokens) == 1 {
		return fmt.Errorf("parse error in (%s): %s", filename, err)
	}
	return fmt.Errorf("parse error at (%s): %s", tokens[1], tokens[len(tokens)-1])
}

func cleanupExecError(filename string, err error) error {
	if _, isExecError := err.(template.ExecError); !isExecError {
		return err
	}
	tokens := strings.SplitN(err.Error(), ": ", 3)
	if len(tokens) != 3 {
		return fmt.Errorf("execution error in (%s): %s", filename, err)
	}
	if parts := warnRegex.FindStringSubmatch(tokens[2]); len(parts) >= 2 {
		return fmt.Errorf("execution error at (%s): %s", tokens[1], parts[1])
	}
	return err
}

func render(tpls map[string]renderable) (rendered map[string]string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("rendering template failed: %v", r)
		}
	}()
	t := template.New("gotpl")
	t.Option("missingkey=zero")
	initFunMap(t)
	keys := sortTemplates(tpls)
	for _, filename := range keys {
		if _, err := t.New(filename).Parse(tpls[filename].tpl); err != nil {
			return nil, cleanupParseError(filename, err)
		}
	}
	rendered = make(map[string]string, len(keys))
	for _, filename := range keys {
		if strings.HasPrefix(path.Base(filename), "_") {
			continue
		}
		vals := tpls[filename].vals
		vals["Template"] = map[string]interface{}{"Name": filename, "BasePath": tpls[filename].basePath}
		var buf strings.Builder
		if err := t.ExecuteTemplate(&buf, filename, vals); err != nil {
			return nil, cleanupExecError(filename, err)
		}
		rendered[filename] = strings.ReplaceAll(buf.String(), "<no value>", "")
	}
	return rendered, nil
}

func readYAML(file string, into interface{}) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

func run(args []string) (map[string]string, error) {
	if len(args) < 1 {
		return nil, errors.New("usage: render CHART_DIR [--name NAME] [--namespace NS] [--kube-version V] [-f FILE]... [--set k=v]...")
	}
	dir := args[0]
	release, namespace, kubeVersion := "release-name", "default", "v1.36.0"
	user := map[string]interface{}{}
	var sets []string
	for i := 1; i < len(args); i++ {
		if i+1 >= len(args) {
			return nil, fmt.Errorf("%s needs a value", args[i])
		}
		switch args[i] {
		case "--name":
			release = args[i+1]
		case "--namespace", "-n":
			namespace = args[i+1]
		case "-f", "--values":
			file := map[string]interface{}{}
			if err := readYAML(args[i+1], &file); err != nil {
				return nil, err
			}
			user = mergeMaps(user, file)
		case "--kube-version":
			kubeVersion = args[i+1]
		case "--set":
			sets = append(sets, args[i+1])
		default:
			return nil, fmt.Errorf("unknown flag %s", args[i])
		}
		i++
	}
	for _, s := range sets {
		if err := setValue(user, s); err != nil {
			return nil, err
		}
	}
	var meta Metadata
	if err := readYAML(filepath.Join(dir, "Chart.yaml"), &meta); err != nil {
		return nil, err
	}
	chartValues := map[string]interface{}{}
	if _, err := os.Stat(filepath.Join(dir, "values.yaml")); err == nil {
		if err := readYAML(filepath.Join(dir, "values.yaml"), &chartValues); err != nil {
			return nil, err
		}
	}
	kube, err := checkKubeVersion(meta, kubeVersion)
	if err != nil {
		return nil, err
	}
	values := coalesceValues(chartValues, user)
	if err := validateValues(dir, meta.Name, values); err != nil {
		return nil, err
	}
	top := map[string]interface{}{
		"Chart":  meta,
		"Values": values,
		"Release": map[string]interface{}{
			"Name": release, "Namespace": namespace, "IsUpgrade": false, "IsInstall": true, "Revision": 1, "Service": "Helm",
		},
		"Capabilities": map[string]interface{}{
			"KubeVersion": kube,
			"APIVersions": VersionSet{"v1", "apps/v1", "rbac.authorization.k8s.io/v1", "admissionregistration.k8s.io/v1"},
		},
		"Files": map[string]interface{}{},
	}
	tpls := map[string]renderable{}
	templatesDir := filepath.Join(dir, "templates")
	err = filepath.WalkDir(templatesDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		tpls[path.Join(meta.Name, filepath.ToSlash(rel))] = renderable{tpl: string(data), vals: top, basePath: path.Join(meta.Name, "templates")}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return render(tpls)
}

// checkKubeVersion refuses a cluster version outside Chart.yaml's kubeVersion, as helm install and
// helm template do (pkg/action: chartutil.IsCompatibleRange, Masterminds/semver v3, the same message),
// and returns .Capabilities.KubeVersion for it.
func checkKubeVersion(meta Metadata, version string) (map[string]interface{}, error) {
	v, err := semver.NewVersion(version)
	if err != nil {
		return nil, fmt.Errorf("invalid kube version %q: %s", version, err)
	}
	if meta.KubeVersion != "" {
		c, err := semver.NewConstraint(meta.KubeVersion)
		if err != nil {
			return nil, fmt.Errorf("Chart.yaml: kubeVersion %q: %s", meta.KubeVersion, err)
		}
		if !c.Check(v) {
			return nil, fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", meta.KubeVersion, version)
		}
	}
	gitVersion := "v" + strings.TrimPrefix(version, "v")
	return map[string]interface{}{
		"Version": gitVersion, "GitVersion": gitVersion, "Major": fmt.Sprint(v.Major()), "Minor": fmt.Sprint(v.Minor()),
	}, nil
}

func main() {
	rendered, err := run(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "Error: %s\n", err)
		os.Exit(1)
	}
	out, _ := json.Marshal(rendered)
	fmt.Println(string(out))
}
