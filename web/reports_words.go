package web

// reportWordsByLang are the report pages' words in each language they
// speak; a report in another language uses English words (names come
// from the configuration).
var reportWordsByLang = map[string]map[string]string{
	"en": {"title": "Report", "dashboard": "Live dashboard", "days": "days", "oneDay": "day", "from": "From", "to": "to", "show": "Show", "print": "Print",
		"day": "Day", "week": "Week", "month": "Month", "none": "None.",
		"issued": "Issued", "served": "Served", "avgWait": "Mean wait", "p50": "Median wait (min)", "p90": "90th percentile (min)", "p90short": "90th percentile wait", "min": "min",
		"byHour": "Arrivals by hour", "byWeekday": "Arrivals by weekday", "hour": "Hour", "weekday": "Weekday", "tickets": "Tickets",
		"weekdays": "Sunday,Monday,Tuesday,Wednesday,Thursday,Friday,Saturday", "weekdaysShort": "Sun,Mon,Tue,Wed,Thu,Fri,Sat",
		"waitsTitle": "Waits against target, per service", "service": "Service", "called": "Called", "target": "Target (min)",
		"withinTitle": "Served within target", "within": "Within target", "share": "Share",
		"ratesTitle": "No-show and transfer rates", "noShows": "No-shows", "transfers": "Transfers",
		"countersTitle": "Per counter", "counter": "Counter", "avgService": "Mean service (min)", "idle": "Idle share",
		"peopleTitle": "Per person", "person": "Person",
		"bookingsTitle": "Appointments", "resource": "Resource", "booked": "Booked", "checkedIn": "Checked in", "missed": "Missed"},
	"zh": {"title": "报表", "dashboard": "实时看板", "days": "天", "oneDay": "天", "from": "从", "to": "到", "show": "查看", "print": "打印",
		"day": "日", "week": "周", "month": "月", "none": "无。",
		"issued": "取号", "served": "已服务", "avgWait": "平均等候", "p50": "等候中位数（分钟）", "p90": "90% 分位（分钟）", "p90short": "90% 分位等候", "min": "分钟",
		"byHour": "每小时取号", "byWeekday": "每周各日取号", "hour": "小时", "weekday": "星期", "tickets": "号数",
		"weekdays": "星期日,星期一,星期二,星期三,星期四,星期五,星期六", "weekdaysShort": "日,一,二,三,四,五,六",
		"waitsTitle": "各业务等候与目标", "service": "业务", "called": "已呼叫", "target": "目标（分钟）",
		"withinTitle": "目标内服务比例", "within": "目标内", "share": "比例",
		"ratesTitle": "过号率与转移率", "noShows": "过号", "transfers": "转移",
		"countersTitle": "各窗口", "counter": "窗口", "avgService": "平均办理（分钟）", "idle": "空闲比例",
		"peopleTitle": "各员工", "person": "员工",
		"bookingsTitle": "预约", "resource": "资源", "booked": "已预约", "checkedIn": "已签到", "missed": "未到"},
	"pt": {"title": "Relatório", "dashboard": "Painel ao vivo", "days": "dias", "oneDay": "dia", "from": "De", "to": "a", "show": "Ver", "print": "Imprimir",
		"day": "Dia", "week": "Semana", "month": "Mês", "none": "Nenhum.",
		"issued": "Emitidas", "served": "Atendidas", "avgWait": "Espera média", "p50": "Espera mediana (min)", "p90": "Percentil 90 (min)", "p90short": "Espera no percentil 90", "min": "min",
		"byHour": "Chegadas por hora", "byWeekday": "Chegadas por dia da semana", "hour": "Hora", "weekday": "Dia", "tickets": "Senhas",
		"weekdays": "domingo,segunda,terça,quarta,quinta,sexta,sábado", "weekdaysShort": "dom,seg,ter,qua,qui,sex,sáb",
		"waitsTitle": "Esperas face à meta, por serviço", "service": "Serviço", "called": "Chamadas", "target": "Meta (min)",
		"withinTitle": "Atendidas dentro da meta", "within": "Dentro da meta", "share": "Proporção",
		"ratesTitle": "Faltas e transferências", "noShows": "Faltas", "transfers": "Transferências",
		"countersTitle": "Por balcão", "counter": "Balcão", "avgService": "Atendimento médio (min)", "idle": "Tempo livre",
		"peopleTitle": "Por pessoa", "person": "Pessoa",
		"bookingsTitle": "Marcações", "resource": "Recurso", "booked": "Marcadas", "checkedIn": "Presentes", "missed": "Faltas"},
}

// reportWords are the words of lang, English for a language without.
func reportWords(lang string) map[string]string {
	if w, ok := reportWordsByLang[lang]; ok {
		return w
	}
	return reportWordsByLang["en"]
}
