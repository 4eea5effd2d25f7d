package tui

import (
	"fmt"
	"strings"
)

// consoleWords are the console's own words (its chrome: titles, column
// heads, states, help) in the languages beside English, keyed by the
// English text, so a screen is in one language: the one of Opts.Lang.
// A language not here, and a text not in its table, are English.
var consoleWords = map[string]map[string]string{
	"zh": {
		"day": "日期", "● connected": "● 已连接", "○ reconnecting": "○ 重新连接中", "○ reconnecting (attempt %d)": "○ 重新连接中（第 %d 次）",
		"✕ auth refused": "✕ 认证被拒", "✕ closed": "✕ 已关闭", "✕ cannot reach (attempt %d)": "✕ 无法连接（第 %d 次）", "○ connecting": "○ 连接中",
		"ready": "就绪", "cannot reach the daemon at %s: is `nowserving serve` running? trying again": "无法连接 %s 的服务端：`nowserving serve` 是否在运行？正在重试",
		"connection lost: reconnecting; the figures are stale until it is back": "连接中断：正在重新连接；恢复前数据可能过时",
		"the daemon refused this console device: check --device and its secret": "服务端拒绝了此控制台设备：请检查 --device 及其密钥",
		"connection closed": "连接已关闭", "connecting...": "连接中…",
		" STALE: no data yet": " 过时：尚无数据", " STALE since ": " 过时，自 ", " STALE": " 过时",
		"SERVICES": "业务", "WAIT": "等候", "LONGEST": "最长", "AVG": "平均", "SERVED": "已办", "NO-SHOW": "过号", "STATE": "状态",
		"ISSUED": "已取号", "LAST": "最近", "TARGET": "目标", "open": "开放", "full": "已满", "closed": "关闭", "paused": "暂停",
		"COUNTERS": "窗口", "TICKET": "号码", "STATUS": "进度", "FOR": "时长", "KEYPAD": "键盘", "called": "呼叫中", "serving": "办理中",
		"not seen": "未上线", "seen": "在线",
		"APPOINTMENTS": "预约", "BOOKED": "已约", "CHECKED IN": "已签到", "MISSED": "爽约", "CANCELLED": "已取消",
		"EVENTS": "事件", " (/ to filter)": "（/ 筛选）", " (filter: %s, / to change)": "（筛选：%s，/ 修改）",
		"offline devices: none reported": "离线设备：无", "offline devices: ": "离线设备：",
		"Counter %d · %s · %s": "%d 号窗口 · %s · %s", "no ticket": "无号码", " · service ": " · 业务 ", " · for ": " · 已 ", " (stale)": "（过时）",
		"waiting for this counter: %s · served here today: %s": "本窗口等候：%s · 今日已办：%s",
		"next": "叫号", "recall": "重呼", "start": "开始", "done": "完成", "no-show": "过号", "transfer": "转移", "pause/resume": "暂停/恢复",
		"counter up": "上一个窗口", "counter down": "下一个窗口", "call number": "叫指定号", "cancel ticket": "取消号码",
		"re-enter no-show": "过号重排", "issue ticket": "取号", "reprint ticket": "补打号票", "check in booking": "预约签到",
		"filter": "筛选", "next site": "下一站点", "previous site": "上一站点", "help": "帮助", "quit": "退出",
		// actions and answers (status line, prompts, questions)
		"sent…": "已发送…", "not sent": "未发送", "filter events (service code, counter number or ticket; empty: all)": "筛选事件（业务代码、窗口号或号码；留空：全部）",
		"issue a ticket of service": "取号，业务", "issue a ticket of %s": "取 %s 号",
		"Cancel ticket %s? It cannot be undone. (y/n)": "取消号码 %s？无法撤销。(y/n)", "cancel %s": "取消 %s",
		"counter %d": "%d 号窗口", "counter %s": "%s 号窗口", "service %s": "业务 %s", "call next at %s": "%s 叫号", "call number to %s": "叫指定号到 %s",
		"call %s to %s": "呼叫 %s 到 %s", "recall at %s": "%s 重呼", "start at %s": "%s 开始办理", "done at %s": "%s 完成",
		"the ticket": "该号码", "Mark %s at %s as a no-show? (y/n)": "将 %[2]s 的 %[1]s 标记为过号？(y/n)", "no-show at %s": "%s 过号",
		"transfer at %s: refused: no ticket at %s (call one first)": "%s 转移：被拒：%s 没有号码（请先叫号）",
		"transfer %s from %s to (service code or counter number)":   "将 %s 从 %s 转到（业务代码或窗口号）",
		"nothing typed: transfer not sent":                          "未输入：未转移", "Transfer %s from %s to %s? (y/n)": "将 %s 从 %s 转到 %s？(y/n)",
		"transfer %s to %s": "转移 %s 到 %s", "resume %s": "恢复 %s", "pause %s": "暂停 %s",
		"%s: printer failed: %s": "%s：打印机故障：%s", "%s: refused: %s (%s)": "%s：被拒：%s（%s）", "%s: refused: %s": "%s：被拒：%s",
		"%s: failed: %v": "%s：失败：%v", " at counter %d": "，在 %d 号窗口", " in %s, %d ahead": "，业务 %s，前面 %d 人", ": ok": "：成功", ": done": "：完成",
		"waiting": "等候中", "expired": "已过期",
		// event kinds (event:KIND, apart from the statuses and keys of the same English word)
		"event:issued": "取号", "event:recalled": "重呼", "event:no_show": "过号", "event:reentered": "重新排队", "event:transferred": "转移",
		"event:cancelled": "取消", "event:expired": "过期", "event:counter_opened": "窗口开放", "event:counter_paused": "窗口暂停",
		"event:counter_closed": "窗口关闭", "event:print_failed": "打印失败", "event:booked": "预约", "event:checked_in": "签到", "event:missed": "爽约",
		"event:called": "呼叫", "event:serving": "开始办理", "event:done": "完成",
		// the event stream's ticket, the devices' health (device:KIND on the offline line)
		"%s in %s": "%s 业务 %s", "%s at %d": "%s 在%d号窗口", "connected": "在线", "offline": "离线", "led": "屏", "ok": "正常",
		"device:device": "设备", "device:keypad": "键盘", "device:led": "屏", "device:printer": "打印机", "device:voice": "语音",
		"device:notify": "通知", "device:print_failed": "打印失败",
		"detail:not connected": "未连接", "detail:not answering": "无响应", "detail:paper_out": "缺纸", "detail:cover_open": "机盖打开",
		"detail:offline": "离线", "detail:no_answer": "无响应", "detail:error": "故障",
		// the protocol's refusals in its own words (wire.StatusErrors)
		"refusal:no ticket waiting": "无人等候", "refusal:invalid transition": "当前状态不允许此操作", "refusal:unknown ticket": "无此号码",
		"refusal:counter paused": "窗口已暂停", "refusal:unknown counter": "无此窗口", "refusal:unknown service": "无此业务",
		"refusal:service full today": "今日已满", "refusal:service closed": "业务未开放", "refusal:re-entry limit reached": "重新排队次数已满",
		"refusal:wrong counter": "不是本窗口", "refusal:forbidden for role": "无此权限", "refusal:unknown booking": "无此预约",
		"refusal:too early to check in": "签到时间未到", "refusal:too late to check in": "已过签到时间", "refusal:booking not active": "预约无效",
		"refusal:rate limited": "操作过于频繁", "refusal:server busy": "服务端繁忙", "refusal:store unavailable": "数据库不可用",
		"refusal:timeout": "超时", "refusal:internal error": "内部错误",
	},
	"pt": {
		"day": "dia", "● connected": "● conectado", "○ reconnecting": "○ reconectando", "○ reconnecting (attempt %d)": "○ reconectando (tentativa %d)",
		"✕ auth refused": "✕ autenticação recusada", "✕ closed": "✕ fechado", "✕ cannot reach (attempt %d)": "✕ sem conexão (tentativa %d)", "○ connecting": "○ conectando",
		"ready": "pronto", "cannot reach the daemon at %s: is `nowserving serve` running? trying again": "o servidor em %s não responde: `nowserving serve` está rodando? tentando de novo",
		"connection lost: reconnecting; the figures are stale until it is back": "conexão perdida: reconectando; os números estão desatualizados até voltar",
		"the daemon refused this console device: check --device and its secret": "o servidor recusou este console: verifique --device e o segredo",
		"connection closed": "conexão fechada", "connecting...": "conectando...",
		" STALE: no data yet": " DESATUALIZADO: sem dados", " STALE since ": " DESATUALIZADO desde ", " STALE": " DESATUALIZADO",
		"SERVICES": "SERVIÇOS", "WAIT": "FILA", "LONGEST": "MÁX", "AVG": "MÉDIA", "SERVED": "ATEND.", "NO-SHOW": "AUSENTE", "STATE": "ESTADO",
		"ISSUED": "EMIT.", "LAST": "ÚLTIMA", "TARGET": "META", "open": "aberto", "full": "lotado", "closed": "fechado", "paused": "pausado",
		"COUNTERS": "GUICHÊS", "TICKET": "SENHA", "STATUS": "SITUAÇÃO", "FOR": "HÁ", "KEYPAD": "TECLADO", "called": "chamada", "serving": "atendim.",
		"not seen": "não visto", "seen": "visto",
		"APPOINTMENTS": "AGENDAMENTOS", "BOOKED": "MARCADOS", "CHECKED IN": "PRESENTES", "MISSED": "FALTAS", "CANCELLED": "CANCELADOS",
		"EVENTS": "EVENTOS", " (/ to filter)": " (/ para filtrar)", " (filter: %s, / to change)": " (filtro: %s, / para mudar)",
		"offline devices: none reported": "dispositivos fora do ar: nenhum", "offline devices: ": "dispositivos fora do ar: ",
		"Counter %d · %s · %s": "Guichê %d · %s · %s", "no ticket": "sem senha", " · service ": " · serviço ", " · for ": " · há ", " (stale)": " (desatualizado)",
		"waiting for this counter: %s · served here today: %s": "aguardando este guichê: %s · atendidos hoje: %s",
		"next": "próxima", "recall": "rechamar", "start": "iniciar", "done": "concluir", "no-show": "ausente", "transfer": "transferir", "pause/resume": "pausar/retomar",
		"counter up": "guichê acima", "counter down": "guichê abaixo", "call number": "chamar senha", "cancel ticket": "cancelar senha",
		"re-enter no-show": "reinserir ausente", "issue ticket": "emitir senha", "reprint ticket": "reimprimir senha", "check in booking": "registrar chegada",
		"filter": "filtrar", "next site": "próximo local", "previous site": "local anterior", "help": "ajuda", "quit": "sair",
		// actions and answers (status line, prompts, questions)
		"sent…": "enviado…", "not sent": "não enviado", "filter events (service code, counter number or ticket; empty: all)": "filtrar eventos (serviço, guichê ou senha; vazio: todos)",
		"issue a ticket of service": "emitir senha do serviço", "issue a ticket of %s": "emitir senha de %s",
		"Cancel ticket %s? It cannot be undone. (y/n)": "Cancelar a senha %s? Não pode ser desfeito. (y/n)", "cancel %s": "cancelar %s",
		"counter %d": "guichê %d", "counter %s": "guichê %s", "service %s": "serviço %s", "call next at %s": "chamar próxima no %s", "call number to %s": "chamar senha no %s",
		"call %s to %s": "chamar %s no %s", "recall at %s": "rechamar no %s", "start at %s": "iniciar no %s", "done at %s": "concluir no %s",
		"the ticket": "a senha", "Mark %s at %s as a no-show? (y/n)": "Marcar %s no %s como ausente? (y/n)", "no-show at %s": "ausente no %s",
		"transfer at %s: refused: no ticket at %s (call one first)": "transferir no %s: recusado: nenhuma senha no %s (chame uma antes)",
		"transfer %s from %s to (service code or counter number)":   "transferir %s do %s para (serviço ou número do guichê)",
		"nothing typed: transfer not sent":                          "nada digitado: transferência não enviada", "Transfer %s from %s to %s? (y/n)": "Transferir %s do %s para %s? (y/n)",
		"transfer %s to %s": "transferir %s para %s", "resume %s": "retomar %s", "pause %s": "pausar %s",
		"%s: printer failed: %s": "%s: falha da impressora: %s", "%s: refused: %s (%s)": "%s: recusado: %s (%s)", "%s: refused: %s": "%s: recusado: %s",
		"%s: failed: %v": "%s: falhou: %v", " at counter %d": " no guichê %d", " in %s, %d ahead": " em %s, %d à frente", ": ok": ": ok", ": done": ": feito",
		"waiting": "aguardando", "expired": "expirada",
		// event kinds (event:KIND, apart from the statuses and keys of the same English word)
		"event:issued": "emitida", "event:recalled": "rechamada", "event:no_show": "ausente", "event:reentered": "reinserida", "event:transferred": "transferida",
		"event:cancelled": "cancelada", "event:expired": "expirada", "event:counter_opened": "guichê aberto", "event:counter_paused": "guichê pausado",
		"event:counter_closed": "guichê fechado", "event:print_failed": "erro impressão", "event:booked": "agendada", "event:checked_in": "chegada", "event:missed": "falta",
		"event:called": "chamada", "event:serving": "atendimento", "event:done": "concluída",
		// the event stream's ticket, the devices' health (device:KIND on the offline line)
		"%s in %s": "%s em %s", "%s at %d": "%s guichê %d", "connected": "conectado", "offline": "inativo",
		"device:device": "dispositivo", "device:keypad": "teclado", "device:led": "painel", "device:printer": "impressora", "device:voice": "voz",
		"device:notify": "notificações", "device:print_failed": "falha de impressão",
		"detail:not connected": "não conectado", "detail:not answering": "não responde", "detail:paper_out": "sem papel", "detail:cover_open": "tampa aberta",
		"detail:offline": "inativa", "detail:no_answer": "não responde", "detail:error": "com erro",
		// the protocol's refusals in its own words (wire.StatusErrors)
		"refusal:no ticket waiting": "nenhuma senha aguardando", "refusal:invalid transition": "operação inválida agora", "refusal:unknown ticket": "senha desconhecida",
		"refusal:counter paused": "guichê pausado", "refusal:unknown counter": "guichê desconhecido", "refusal:unknown service": "serviço desconhecido",
		"refusal:service full today": "serviço lotado hoje", "refusal:service closed": "serviço fechado", "refusal:re-entry limit reached": "limite de reinserções atingido",
		"refusal:wrong counter": "guichê errado", "refusal:forbidden for role": "não permitido", "refusal:unknown booking": "agendamento desconhecido",
		"refusal:too early to check in": "cedo demais para registrar chegada", "refusal:too late to check in": "tarde demais para registrar chegada",
		"refusal:booking not active": "agendamento não ativo", "refusal:rate limited": "pedidos demais", "refusal:server busy": "servidor ocupado",
		"refusal:store unavailable": "banco de dados indisponível", "refusal:timeout": "tempo esgotado", "refusal:internal error": "erro interno",
	},
}

// translator returns the function that puts a text of the console in
// lang ("" or one not in consoleWords: English).
func translator(lang string) func(string) string {
	w := consoleWords[strings.ToLower(strings.SplitN(lang, "-", 2)[0])]
	return func(s string) string {
		if t, ok := w[s]; ok {
			return t
		}
		return s
	}
}

// tf is fmt.Sprintf of the translation of format.
func (m *Model) tf(format string, args ...any) string { return fmt.Sprintf(m.t(format), args...) }
